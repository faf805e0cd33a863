// The JSON messages of the native login API (see native-login.openapi.yaml).
import Foundation
import Hummingbird
import SignetCore

/// The body of every step after the start: which login, and which client continues it.
struct NativeStepRequest: Decodable {
    /// The handle `start` returned.
    var loginSession: String
    var clientID: String
    var scenario: String?
    var username: String?
    var password: String?
    var rememberMe: Bool?
    var code: String?

    enum CodingKeys: String, CodingKey {
        case scenario, username, password, code
        case loginSession = "login_session"
        case clientID = "client_id"
        case rememberMe = "remember_me"
    }
}

/// The native login API's errors (``APIError``): stable codes, whether trying again can help, and hints.
extension APIError {
    static let invalidSession = APIError(
        .badRequest, "invalid_login_session", "the login session is unknown, expired or finished; start again", retryable: false)
    static let clientMismatch = APIError(.forbidden, "client_mismatch", "this login session belongs to another client", retryable: false)
    static let concurrentUpdate = APIError(.conflict, "concurrent_update", "another request for this step came first", retryable: false)
    static func wrongStep(expected: LoginStep) -> APIError {
        APIError(.conflict, "wrong_step", "this login expects the step \(expected.rawValue)", retryable: true, nextStep: expected)
    }

    /// The API's error for a refusal of the login flow.
    init(refusal: LoginRefusal, sms: SMSPolicy) {
        switch refusal {
        case .wrongStep(let expected):
            self = .wrongStep(expected: expected)
        case .stepInProgress:
            self = .concurrentUpdate
        case .scenarioNotAllowed(let scenario):
            self.init(
                .forbidden, "unauthorized_client", "this client may not use the scenario \(scenario.rawValue) for this request", retryable: true)
        case .missingCredentials:
            self.init(.badRequest, "invalid_request", "username and password are required", retryable: true)
        case .invalidCredentials:
            self.init(.unauthorized, "invalid_credentials", "the username or password is incorrect", retryable: true)
        case .accountChanged:
            self.init(
                .forbidden, "login_required", "the account changed during this login (locked, removed or a new password); start again",
                retryable: false)
        case .loginAttemptsExhausted:
            self.init(.forbidden, "login_attempts_exhausted", "too many passwords tried in this login; start again", retryable: false)
        case .accountLocked:
            self.init(.forbidden, "account_locked", "this account is locked; contact support", retryable: false)
        case .paused(let seconds):
            self.init(.tooManyRequests, "too_many_attempts", LoginThrottle.pauseMessage(seconds: seconds), retryable: true, retryAfter: seconds)
        case .rememberedUserChanged:
            self = .invalidSession
        case .noSecondFactor:
            self.init(.forbidden, "no_second_factor", "this user has no phone number for the SMS step", retryable: false)
        case .wrongUser:
            self.init(.forbidden, "login_required", "the user who signed in is not the one id_token_hint names", retryable: false)
        case .codeNotSent:
            self.init(.conflict, "code_not_sent", "the code was not delivered; ask for one with sms_code/resend", retryable: true, nextStep: .smsCode)
        case .malformedCode(let digits):
            self.init(.badRequest, "invalid_request", "code must be \(digits) digits", retryable: true, nextStep: .smsCode)
        case .wrongCode(let left):
            self.init(.unauthorized, "invalid_code", "the code is not right", retryable: true, attemptsLeft: left, nextStep: .smsCode)
        case .codeAttemptsExhausted(let canResend):
            self.init(
                .forbidden, "code_attempts_exhausted", canResend ? "too many wrong codes: ask for a new code" : "too many wrong codes: start again",
                retryable: canResend, attemptsLeft: 0, nextStep: canResend ? .smsCode : nil)
        case .codeExpired:
            self.init(.badRequest, "code_expired", "the code has expired: ask for a new one", retryable: true, nextStep: .smsCode)
        case .resendTooEarly(let seconds):
            self.init(
                .tooManyRequests, "resend_too_early", "wait before asking for a new code", retryable: true, retryAfter: seconds, nextStep: .smsCode)
        case .resendLimitReached:
            self.init(.tooManyRequests, "resend_limit_reached", "no more codes can be sent in this login; start again", retryable: false)
        case .deliveryFailed:
            self.init(
                .serviceUnavailable, "delivery_failed", "the code could not be sent; ask again with sms_code/resend", retryable: true,
                nextStep: .smsCode)
        case .accountLimit(.wrongCodes, let retryAfter):
            self.init(
                .tooManyRequests, "account_code_limit", "too many wrong codes for this account in \(Int(sms.accountWrongCodeWindow / 3600)) hours",
                retryable: true, retryAfter: retryAfter, nextStep: .smsCode)
        case .accountLimit(.codeSends, let retryAfter):
            self.init(
                .tooManyRequests, "account_send_limit", "too many codes sent to this account in the last \(Int(sms.accountSendWindow / 60)) minutes",
                retryable: true, retryAfter: retryAfter, nextStep: .smsCode)
        }
    }
}

extension NativeLoginAnswer {
    /// The answer that ends a login of the native or device channel: the authorization response
    /// as JSON (code, state, iss, redirect_uri) and any Remember-User-ID token.
    init(finished: FinishedLogin, issuer: String) {
        self.init(nextStep: .finished)
        authorizationCode = finished.code.code
        state = finished.session.request.state
        iss = issuer
        redirectURI = finished.session.request.redirectURI
        rememberToken = finished.rememberToken
    }
}
