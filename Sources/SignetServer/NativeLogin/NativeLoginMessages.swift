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

/// An error of the native login API: a stable code, whether trying again can help, and hints.
struct NativeLoginError: HTTPResponseError {
    let status: HTTPResponse.Status
    let body: NativeLoginErrorBody

    init(_ status: HTTPResponse.Status, _ error: String, _ description: String, retryable: Bool, retryAfter: TimeInterval? = nil, attemptsLeft: Int? = nil, nextStep: LoginStep? = nil) {
        self.status = status
        self.body = NativeLoginErrorBody(
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
