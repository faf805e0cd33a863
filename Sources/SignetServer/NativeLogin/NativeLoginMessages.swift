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

/// What the SMS step needs the app to show.
struct NativeSMSInfo: Encodable {
    /// The phone number with all but two digits hidden.
    var phoneHint: String
    var digits: Int
    /// Seconds until the code expires.
    var expiresIn: Int
    /// Seconds until a new code may be asked for.
    var resendIn: Int
    /// How many more codes may be sent.
    var sendsLeft: Int

    enum CodingKeys: String, CodingKey {
        case digits
        case phoneHint = "phone_hint"
        case expiresIn = "expires_in"
        case resendIn = "resend_in"
        case sendsLeft = "sends_left"
    }
}

/// Every successful answer: the next step and what it needs; `finished` carries the code.
struct NativeLoginResponse: Encodable {
    var loginSession: String?
    var nextStep: String
    var expiresIn: Int?
    var scenarios: [String]?
    var scenario: String?
    /// The remembered username, when a Remember-User-ID token skipped the username step.
    var username: String?
    var sms: NativeSMSInfo?
    // When finished — the authorization response, as a redirect would carry it (RFC 6749 §4.1.2, RFC 9207).
    var authorizationCode: String?
    var state: String?
    var iss: String?
    var redirectURI: String?
    /// A Remember-User-ID token, when `remember_me` was asked for.
    var rememberToken: String?

    enum CodingKeys: String, CodingKey {
        case scenarios, scenario, username, sms, state, iss
        case loginSession = "login_session"
        case nextStep = "next_step"
        case expiresIn = "expires_in"
        case authorizationCode = "authorization_code"
        case redirectURI = "redirect_uri"
        case rememberToken = "remember_token"
    }
}

/// An error of the native login API: a stable code, whether trying again can help, and hints.
struct NativeLoginError: HTTPResponseError {
    let status: HTTPResponse.Status
    let body: Body

    struct Body: Encodable {
        var error: String
        var errorDescription: String
        /// Whether the same login can go on (true) or must be started again (false).
        var retryable: Bool
        var retryAfter: Int?
        var attemptsLeft: Int?
        var nextStep: String?

        enum CodingKeys: String, CodingKey {
            case error, retryable
            case errorDescription = "error_description"
            case retryAfter = "retry_after"
            case attemptsLeft = "attempts_left"
            case nextStep = "next_step"
        }
    }

    init(_ status: HTTPResponse.Status, _ error: String, _ description: String, retryable: Bool, retryAfter: TimeInterval? = nil, attemptsLeft: Int? = nil, nextStep: LoginStep? = nil) {
        self.status = status
        self.body = Body(
            error: error, errorDescription: description, retryable: retryable, retryAfter: retryAfter.map { Int($0.rounded(.up)) },
            attemptsLeft: attemptsLeft, nextStep: nextStep?.rawValue)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse.make(body, status: status)
        if let retryAfter = body.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    static let invalidSession = NativeLoginError(.badRequest, "invalid_login_session", "the login session is unknown, expired or finished; start again", retryable: false)
    static let clientMismatch = NativeLoginError(.forbidden, "client_mismatch", "this login session belongs to another client", retryable: false)
    static let concurrentUpdate = NativeLoginError(.conflict, "concurrent_update", "another request for this step came first", retryable: false)
    static func wrongStep(expected: LoginStep) -> NativeLoginError {
        NativeLoginError(.conflict, "wrong_step", "this login expects the step \(expected.rawValue)", retryable: true, nextStep: expected)
    }
}
