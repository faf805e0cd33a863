// The SDK's one error type: a stable code, the server's words kept intact, and whether to retry.
import Foundation
import SignetCore

/// An error from the SDK — MEPi's ErrorOutput in Swift.
///
/// `code` is stable and safe to switch on. When the server answered with an error, its
/// `error` / `error_description` are kept in ``serverError`` exactly as sent. ``isRetryable``
/// tells whether the same operation may succeed if tried again (after ``retryAfter`` seconds,
/// with other input, or after asking for a new code); when false, start the login again.
public struct SignetClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable error codes.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The network failed before an answer arrived. Retryable.
        public static let transport = Code(rawValue: "transport")
        /// The server answered with an error; see ``SignetClientError/serverError``.
        public static let server = Code(rawValue: "server")
        /// The server's answer could not be understood. Final.
        public static let invalidResponse = Code(rawValue: "invalid_response")
        /// The authorization response's `state` or `iss` did not match. Final.
        public static let responseMismatch = Code(rawValue: "response_mismatch")
        /// The SDK was used wrongly (e.g. a step called after the login finished). Final.
        public static let misuse = Code(rawValue: "misuse")
        /// There are no tokens, or they can no longer be refreshed: sign in again. Final.
        public static let notSignedIn = Code(rawValue: "not_signed_in")
        /// The ID token's `acr` is weaker than the acr_values asked for: the tokens are not returned.
        public static let acrNotSatisfied = Code(rawValue: "acr_not_satisfied")
    }

    public var code: Code
    /// The server's error code (`invalid_code`, `invalid_grant`, …), when the server sent one.
    public var serverError: OAuthError?
    /// The HTTP status of the server's answer, when there was one.
    public var status: Int?
    public var isRetryable: Bool
    /// Seconds to wait before retrying, when the server said.
    public var retryAfter: Int?
    /// Codes left to try in the SMS step, when the server said.
    public var attemptsLeft: Int?

    public init(_ code: Code, serverError: OAuthError? = nil, status: Int? = nil, isRetryable: Bool, retryAfter: Int? = nil, attemptsLeft: Int? = nil) {
        self.code = code
        self.serverError = serverError
        self.status = status
        self.isRetryable = isRetryable
        self.retryAfter = retryAfter
        self.attemptsLeft = attemptsLeft
    }

    public var description: String {
        if let serverError { return "\(code): \(serverError.error.rawValue) — \(serverError.errorDescription ?? "")" }
        return code.rawValue
    }

    /// The error an unsuccessful answer carries.
    static func from(_ response: HTTPTransportResponse) -> SignetClientError {
        guard let body = try? JSONDecoder().decode(NativeLoginErrorBody.self, from: response.body) else {
            return SignetClientError(.invalidResponse, status: response.status, isRetryable: response.status >= 500)
        }
        // OAuth errors other than temporarily_unavailable are final unless the server says otherwise.
        let retryable = body.retryable ?? (body.error == "temporarily_unavailable" || response.status >= 500)
        return SignetClientError(
            .server, serverError: OAuthError(OAuthError.Code(rawValue: body.error), body.errorDescription), status: response.status,
            isRetryable: retryable, retryAfter: body.retryAfter, attemptsLeft: body.attemptsLeft)
    }

    static func wrap(_ error: any Error) -> SignetClientError {
        if let error = error as? SignetClientError { return error }
        if let error = error as? SignetError, error.code == .transportFailure { return SignetClientError(.transport, isRetryable: true) }
        return SignetClientError(.invalidResponse, isRetryable: false)
    }
}
