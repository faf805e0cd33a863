// What a login's outcome adds to the metrics and the audit trail.
import Foundation
import SignetStore

/// Classifies a login outcome once, for the counters and the stored audit event.
enum LoginObservation {
    /// What the outcome counts as: the metric's outcome, the audit kind and reason, and the limit
    /// that refused it (for the throttle counter). `nil` for steps that are neither success nor failure.
    ///
    /// Refusals by a limit are counted, not stored: they cost the asker nothing, so storing each
    /// would let anyone fill the audit trail. The failures the limits let through are stored.
    struct Classified: Equatable {
        var outcome: LoginMetricOutcome
        var auditKind: String?
        var reason: String?
        var limit: String?
    }

    static func classify(_ refusal: LoginRefusal) -> Classified? {
        switch refusal {
        case .invalidCredentials: Classified(outcome: .wrongPassword, auditKind: "login.failed", reason: "wrong_password")
        case .wrongCode: Classified(outcome: .wrongCode, auditKind: "login.failed", reason: "wrong_code")
        case .codeAttemptsExhausted: Classified(outcome: .wrongCode, auditKind: "login.failed", reason: "code_attempts_exhausted")
        case .loginAttemptsExhausted: Classified(outcome: .wrongPassword, auditKind: "login.failed", reason: "login_attempts_exhausted")
        case .accountLocked: Classified(outcome: .locked, auditKind: "login.locked", reason: "account_locked")
        case .paused: Classified(outcome: .throttled, auditKind: nil, limit: "sign_in_failures")
        case .accountLimit(let limit, _): Classified(outcome: .throttled, auditKind: nil, limit: limit.rawValue)
        case .wrongUser: Classified(outcome: .refused, auditKind: "login.failed", reason: "wrong_user")
        case .rememberedUserChanged: Classified(outcome: .refused, auditKind: "login.failed", reason: "remembered_user_changed")
        case .accountChanged: Classified(outcome: .refused, auditKind: "login.failed", reason: "account_changed")
        case .noSecondFactor: Classified(outcome: .refused, auditKind: "login.failed", reason: "no_second_factor")
        case .wrongStep, .stepInProgress, .scenarioNotAllowed, .missingCredentials, .codeNotSent, .malformedCode, .codeExpired, .resendTooEarly,
            .resendLimitReached, .deliveryFailed:
            nil
        }
    }
}

extension LoginRunner {
    /// Counts the outcome and stores its audit event: a finished login, or a refusal that is a failure.
    func observe(_ outcome: LoginOutcome) async throws {
        switch outcome {
        case .finished(let done):
            server.metrics.login(channel: done.session.channel.rawValue, outcome: .success)
            server.metrics.issued("code", grantType: "authorization_code", clientID: done.session.request.clientID)
            // Not binding (WriteBinding): lost in a power failure, it is lost with the login's code
            // and grant, and the code's redemption flushes it first. Refusals' events bind: for
            // some (a locked account, a login ended) the event is the only record.
            try await WriteBinding.notBinding {
                try await audit.record(
                    "login.succeeded", userID: done.authentication.userID, clientID: done.session.request.clientID, actor: .user,
                    reason: "\(done.session.channel.rawValue) acr=\(done.authentication.acr)")
            }
        case .refused(let refusal, let session), .abandoned(let refusal, let session):
            guard let classified = LoginObservation.classify(refusal) else { return }
            server.metrics.login(channel: session.channel.rawValue, outcome: classified.outcome)
            if let limit = classified.limit { server.metrics.throttled(limit) }
            guard let kind = classified.auditKind else { return }
            try await audit.record(
                kind, userID: session.userID, clientID: session.request.clientID, actor: .user,
                reason: "\(session.channel.rawValue) \(classified.reason ?? "")")
        case .show, .conflict:
            return
        }
    }
}
