// Runs the login flow's actions: the one place a login touches storage, passwords and SMS.
import Crypto
import Foundation
import Logging
import SignetCore
import SignetStore

/// Where a login submission comes from.
struct LoginContext: Sendable {
    /// The client address as resolved for throttling.
    var address: String
    /// Shown in the SMS text.
    var clientName: String
    /// The browser session the login will start (page only), so the grant can name its `sid`.
    var browserSessionID: String?
}

/// How a submission ended, for the channel to render.
enum LoginOutcome: Sendable {
    /// Show the login's step (it is stored as given).
    case show(LoginSessionRecord)
    /// Not applied, for this reason; the login is as given.
    case refused(LoginRefusal, LoginSessionRecord)
    /// The login was deleted, for this reason.
    case abandoned(LoginRefusal, LoginSessionRecord)
    /// Another request changed the login first; nothing of this one was checked or revealed.
    case conflict
    /// Done: the authorization code was issued.
    case finished(FinishedLogin)
}

/// A finished login.
struct FinishedLogin: Sendable {
    /// The login as it was when it finished.
    var session: LoginSessionRecord
    var code: IssuedCode
    var authentication: Authentication
    /// A Remember-User-ID token, when one was asked for.
    var rememberToken: String?
}

/// Feeds events to ``LoginFlow`` and carries out its actions, for every channel.
///
/// Each transition's login is stored (over the version it was read at) before its action
/// runs and before anything is answered; the account's per-day wrong-code budget is charged
/// after a code check is stored and before its result is answered, and its per-hour send
/// budget before a code is made.
struct LoginRunner: Sendable {
    let server: ServerContext
    /// Logins in progress, each changed over the version it was read at.
    let logins: any GrantStore
    let users: any UserStore
    /// The per-account SMS budgets.
    let limitStore: any LimitStore
    let throttleStore: any ThrottleStore
    let durability: any WriteDurabilityStore
    let codeIssuer: AuthorizationCodeIssuer
    let rememberTokens: RememberTokens
    let audit: AuditTrail
    let hasher: PasswordHasher
    /// Where SMS one-time codes go.
    let messages: any MessageSender
    /// The key one-time codes are hashed with (``ServerKeys/otp``).
    let otpKey: SymmetricKey
    let smsPolicy: SMSPolicy
    let throttlePolicy: ThrottlePolicy

    var policy: SMSPolicy { smsPolicy }
    var limits: AccountLimits { AccountLimits(store: limitStore, policy: policy, clock: server.clock) }
    var flow: LoginFlow { LoginFlow(sms: policy, now: server.now(), passwordAttemptsPerLogin: throttlePolicy.passwordAttemptsPerLogin) }
    var passwords: PasswordChecker {
        PasswordChecker(
            users: users, throttle: LoginThrottle(store: throttleStore, policy: throttlePolicy, clock: server.clock),
            passwords: hasher, logger: server.logger)
    }

    // MARK: submissions

    func chooseScenario(_ scenario: LoginScenario, offered: [LoginScenario], on session: LoginSessionRecord, context: LoginContext) async throws
        -> LoginOutcome
    {
        try await run(.chooseScenario(scenario, offered: offered), on: session, context: context)
    }

    /// `username` is `nil` at the `password` step of a remembered user.
    func submitPassword(username: String?, password: String, rememberMe: Bool, on session: LoginSessionRecord, context: LoginContext) async throws
        -> LoginOutcome
    {
        try await run(.submitPassword(username: username, rememberMe: rememberMe), on: session, password: password, context: context)
    }

    func submitCode(_ code: String, on session: LoginSessionRecord, context: LoginContext) async throws -> LoginOutcome {
        let digest = OneTimeCodes.digest(flow.isWellFormed(code) ? code : "", session: session.id, key: otpKey)
        return try await run(.submitCode(code: code, digest: digest), on: session, context: context)
    }

    func resend(on session: LoginSessionRecord, context: LoginContext) async throws -> LoginOutcome {
        try await run(.requestResend, on: session, context: context)
    }

    /// A device login's verified assertion (``UAFOperations/authenticate(_:device:client:purposes:)``).
    func deviceAssertionVerified(_ proved: AuthenticatedAssertion, on session: LoginSessionRecord, context: LoginContext) async throws -> LoginOutcome
    {
        try await run(
            .deviceAssertionVerified(
                userID: proved.authenticator.userID, instanceID: proved.authenticator.instanceID, acr: proved.acr, amr: proved.amr),
            on: session, context: context)
    }

    // MARK: the loop

    private func run(_ first: LoginEvent, on loaded: LoginSessionRecord, password: String? = nil, context: LoginContext) async throws -> LoginOutcome
    {
        let outcome = try await advance(first, on: loaded, password: password, context: context)
        try await observe(outcome)
        return outcome
    }

    private func advance(_ first: LoginEvent, on loaded: LoginSessionRecord, password: String? = nil, context: LoginContext) async throws
        -> LoginOutcome
    {
        var current = loaded
        var event = first
        var pendingCode: String?
        // Account budget taken in this run and not yet spent for good.
        var wrongCodeTaken = false, sendTaken = false
        // The security stamp the password check in this run saw, if there was one.
        var verifiedStamp: String?
        func giveBackTaken(keepWrongCode: Bool) async throws {
            guard let userID = current.userID else { return }
            if wrongCodeTaken, !keepWrongCode { try await limits.giveBack(.wrongCodes, userID: userID) }
            if sendTaken { try await limits.giveBack(.codeSends, userID: userID) }
        }
        // Ends the login for good: deleted, so nothing can continue it.
        func abandon(_ reason: LoginRefusal) async throws -> LoginOutcome {
            try await giveBackTaken(keepWrongCode: true)
            _ = try await logins.consumeLoginSession(id: current.id)
            return .abandoned(reason, current)
        }
        while true {
            let transition = flow.handle(event, in: current)
            if let next = transition.save {
                guard let stored = try await save(next, over: current) else {
                    try await giveBackTaken(keepWrongCode: false)
                    return .conflict
                }
                current = stored
            }
            // The try is claimed and counted in the login; before its result is revealed it is
            // also charged to the account's daily budget (given back below if the code is right).
            if transition.checksCode, let userID = current.userID {
                if case .spent(let retryAfter) = try await limits.take(.wrongCodes, userID: userID) {
                    return .refused(.accountLimit(.wrongCodes, retryAfter: retryAfter), current)
                }
                wrongCodeTaken = true
            }
            switch transition.action {
            case .show:
                return .show(current)
            case .refuse(let reason):
                // A wrong code stays counted; a send that did not happen is given back.
                try await giveBackTaken(keepWrongCode: true)
                return .refused(reason, current)
            case .abandon(let reason):
                return try await abandon(reason)
            case .checkPassword(let submitted):
                var username = submitted
                if current.remembered {
                    guard let userID = current.userID, let user = try await users.user(id: userID) else {
                        return try await abandon(.rememberedUserChanged)
                    }
                    username = user.username
                }
                let check = try await passwords.check(
                    username: username, password: password ?? "", address: context.address, clientID: current.request.clientID,
                    requiredUserID: current.request.idTokenHintSubject ?? (current.remembered ? current.userID : nil))
                if case .accepted(_, _, let stamp) = check { verifiedStamp = stamp }
                event = .passwordChecked(check)
            case .makeCode(let knownNumber):
                guard let userID = current.userID else { return try await abandon(.codeNotSent) }
                // Right after this run's password check the user was just read; a resend reads it again
                // (a lock or new password since then ends the login here, and at finish in any case).
                var phoneNumber = knownNumber
                if verifiedStamp == nil {
                    guard let user = try await currentUser(userID, stamp: current.userStamp) else { return try await abandon(.accountChanged) }
                    phoneNumber = phoneNumber ?? user.phoneNumber
                }
                guard let phoneNumber else { return try await abandon(.noSecondFactor) }
                // The send is charged on disk before the message goes out (its own flush, not the
                // answer's): a power loss cannot give back a send that was made.
                let charge = try await durability.durableWrites { try await limits.take(.codeSends, userID: userID) }
                if case .spent(let retryAfter) = charge {
                    return .refused(.accountLimit(.codeSends, retryAfter: retryAfter), current)
                }
                sendTaken = true
                let code = OneTimeCodes.make(digits: policy.digits, random: server.random)
                pendingCode = code
                event = .codeMade(digest: OneTimeCodes.digest(code, session: current.id, key: otpKey), phoneNumber: phoneNumber)
            case .deliver:
                sendTaken = false  // a send is spent once recorded, delivered or not
                guard let code = pendingCode, let challenge = current.sms else { return .show(current) }
                if try await deliver(code, to: challenge.phoneNumber, clientName: context.clientName) {
                    try await audit.record(
                        "sms.sent", userID: current.userID, clientID: current.request.clientID, actor: .system, reason: "login_otp")
                    return .show(current)
                }
                event = .deliveryFailed
            case .finish(let userID, let proof):
                // A right code is not a wrong one: its use of the daily budget is given back.
                try await giveBackTaken(keepWrongCode: false)
                // The user may have been locked, removed or given a new password since the check.
                guard try await currentUser(userID, stamp: verifiedStamp ?? current.userStamp) != nil else {
                    return try await abandon(.accountChanged)
                }
                return try await finish(current, userID: userID, proof: proof, userStamp: verifiedStamp ?? current.userStamp, context: context)
            }
        }
    }

    /// The user, if they still exist, are not locked, and have the security stamp the password
    /// check saw (no password change or lock since).
    private func currentUser(_ userID: String, stamp: String?) async throws -> UserRecord? {
        guard let user = try await users.user(id: userID), !user.locked, user.securityStamp == stamp else { return nil }
        return user
    }

    /// Writes `next` over `current` if nobody changed the login since `current` was read;
    /// `nil` when another request came first.
    private func save(_ next: LoginSessionRecord, over current: LoginSessionRecord) async throws -> LoginSessionRecord? {
        var written = next
        written.version = current.version + 1
        return try await logins.replaceLoginSession(written, expectedVersion: current.version) ? written : nil
    }

    private func deliver(_ code: String, to phoneNumber: String, clientName: String) async throws -> Bool {
        let message = OutgoingMessage(
            id: server.random.token(byteCount: 16), to: phoneNumber,
            body: OneTimeCodes.message(code: code, clientName: clientName, issuer: server.issuer), purpose: "login_otp", createdAt: server.now())
        do {
            try await messages.send(message)
            server.metrics.sms("sent")
            return true
        } catch {
            server.metrics.sms("failed")
            server.logger.warning("SMS delivery failed", metadata: ["event": "sms.failed", "error": .string(String(describing: error))])
            return false
        }
    }

    /// Consumes the login (exactly once), issues the code, and a remember token when asked for.
    private func finish(_ session: LoginSessionRecord, userID: String, proof: LoginProof, userStamp: String?, context: LoginContext) async throws
        -> LoginOutcome
    {
        guard let consumed = try await logins.consumeLoginSession(id: session.id) else { return .conflict }
        // The grant and browser session carry the stamp: a password change or lock racing this
        // finish still ends them (they are checked against the user's stamp whenever used).
        let authentication = Authentication.of(proof, userID: userID, at: server.now(), sessionID: context.browserSessionID, userStamp: userStamp)
        let code = try await codeIssuer.issue(for: consumed.request, authentication: authentication)
        var rememberToken: String?
        if session.rememberMe {
            rememberToken = try await rememberTokens.issue(clientID: consumed.request.clientID, userID: userID)
        }
        server.logger.info(
            "login succeeded",
            metadata: [
                "event": "login.succeeded", "client_id": .string(consumed.request.clientID), "sub": .string(userID),
                "factors": .stringConvertible(authentication.acr == AuthorizationRequestValidator.acrTwoFactors ? 2 : 1),
                "channel": .string(session.channel.rawValue),
            ])
        return .finished(FinishedLogin(session: session, code: code, authentication: authentication, rememberToken: rememberToken))
    }
}
