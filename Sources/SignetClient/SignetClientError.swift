// The SDK's one error type: a stable code, the server's words kept intact, and whether to retry.
import Foundation
import SignetCore

/// An error from the SDK — MEPi's ErrorOutput in Swift.
///
/// `code` is stable and safe to switch on. When the server answered with an error, its
/// `error` / `error_description` are kept in ``serverError`` exactly as sent. ``isRetryable``
/// tells whether the same operation may succeed if tried again (after ``retryAfter`` seconds,
/// with other input, or after asking for a new code); when false, start the login again.
///
/// Equality compares ``code``, ``serverError``, ``status``, ``isRetryable``, ``retryAfter`` and
/// ``attemptsLeft``, as before; ``underlying``, ``idTokenFailures`` and ``reason`` explain the
/// error and are left out, so a test or a `switch` can match on what the app acts upon.
public struct SignetClientError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
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
        /// The ID token failed a check of OIDC Core §3.1.3.7; see ``SignetClientError/idTokenFailures``.
        /// The tokens are not returned. Final.
        public static let invalidIDToken = Code(rawValue: "invalid_id_token")
        /// The token endpoint answered with a `token_type` other than the one asked for: `DPoP` when
        /// a DPoP proof was sent (RFC 9449 §5), `Bearer` otherwise (RFC 6749 §7.1). Final.
        public static let unexpectedTokenType = Code(rawValue: "unexpected_token_type")
        /// The user closed the browser sheet (or the app cancelled the sign-in). Final for that attempt.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The browser sheet could not be shown or failed; see ``SignetClientError/underlying``.
        public static let userAgent = Code(rawValue: "user_agent")
        /// The DPoP key could not be loaded, made or used; see ``SignetClientError/underlying``. Final.
        public static let keyUnavailable = Code(rawValue: "key_unavailable")
        /// Tokens could not be read from or written to storage; see ``SignetClientError/underlying``.
        public static let storage = Code(rawValue: "storage")
        /// The device key or its certificate chain could not be made, read, kept or used: a wrong
        /// encryption key, an altered file, a Keychain failure; see ``SignetClientError/underlying``. Final.
        public static let deviceKeyUnavailable = Code(rawValue: "device_key_unavailable")
        /// The call needs a device certificate and the key store holds none: activate the device first. Final.
        public static let deviceNotActivated = Code(rawValue: "device_not_activated")
        /// The authenticator is not registered (any more): it was deregistered here or elsewhere,
        /// removed by a helpdesk or a lost-device lock, or never registered. Register it again. Final.
        public static let authenticatorNotRegistered = Code(rawValue: "authenticator_not_registered")
        /// The OS wiped or invalidated the authenticator's key (the device lock screen was removed,
        /// or biometrics changed with `invalidateOnNewOsBiometrics`). It was forgotten here and
        /// on the provider; register again. Final.
        public static let authenticatorInvalidated = Code(rawValue: "authenticator_invalidated")
        /// The PIN was wrong; ``SignetClientError/attemptsLeft`` tries remain, and
        /// ``SignetClientError/retryAfter`` seconds must pass before the next. Retryable.
        public static let wrongPIN = Code(rawValue: "wrong_pin")
        /// A PIN cool-down runs: nothing was checked; try after ``SignetClientError/retryAfter`` seconds. Retryable.
        public static let pinCoolingDown = Code(rawValue: "pin_cool_down")
        /// Too many wrong PINs: the PIN authenticator was removed, here and on the provider. Register again. Final.
        public static let pinLockedOut = Code(rawValue: "pin_locked_out")
        /// The provider refused the authenticator for good (its counter went backwards: possibly
        /// cloned). It was forgotten here; register again. Final.
        public static let authenticatorRevoked = Code(rawValue: "authenticator_revoked")
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
    /// Every check an ID token failed, with ``Code/invalidIDToken``.
    public var idTokenFailures: [IDTokenFailure]
    /// What went wrong, for people, when the code alone does not say. Never contains secrets.
    public var reason: String?
    /// The error that caused this one (a transport, Keychain or CryptoKit error), when there was one.
    public var underlying: (any Error)?

    public init(
        _ code: Code, serverError: OAuthError? = nil, status: Int? = nil, isRetryable: Bool, retryAfter: Int? = nil, attemptsLeft: Int? = nil,
        idTokenFailures: [IDTokenFailure] = [], reason: String? = nil, underlying: (any Error)? = nil
    ) {
        self.code = code
        self.serverError = serverError
        self.status = status
        self.isRetryable = isRetryable
        self.retryAfter = retryAfter
        self.attemptsLeft = attemptsLeft
        self.idTokenFailures = idTokenFailures
        self.reason = reason
        self.underlying = underlying
    }

    public static func == (lhs: SignetClientError, rhs: SignetClientError) -> Bool {
        lhs.code == rhs.code && lhs.serverError == rhs.serverError && lhs.status == rhs.status && lhs.isRetryable == rhs.isRetryable
            && lhs.retryAfter == rhs.retryAfter && lhs.attemptsLeft == rhs.attemptsLeft
    }

    public var description: String {
        var text = code.rawValue
        if let serverError { text += ": \(serverError.error.rawValue) — \(serverError.errorDescription ?? "")" }
        if !idTokenFailures.isEmpty { text += ": " + idTokenFailures.map(\.rawValue).joined(separator: "; ") }
        if let reason { text += " (\(reason))" }
        return text
    }

    /// A sentence for people (`LocalizedError`); in English, since the wire errors are.
    public var errorDescription: String? {
        let summary: String
        switch code {
        case .transport: summary = "The network connection to the sign-in service failed."
        case .server: summary = "The sign-in service refused the request (\(serverError?.error.rawValue ?? "HTTP \(status ?? 0)"))."
        case .invalidResponse: summary = "The sign-in service sent an answer that could not be understood."
        case .responseMismatch: summary = "The sign-in response does not belong to this sign-in (state or issuer mismatch)."
        case .misuse: summary = "The sign-in SDK was used in a way it does not support."
        case .notSignedIn: summary = "You are not signed in, or your session has ended. Sign in again."
        case .acrNotSatisfied: summary = "The sign-in was weaker than the app asked for."
        case .invalidIDToken: summary = "The identity token failed validation: " + idTokenFailures.map(\.rawValue).joined(separator: "; ") + "."
        case .unexpectedTokenType: summary = "The sign-in service issued a token of an unexpected type."
        case .cancelled: summary = "The sign-in was cancelled."
        case .userAgent: summary = "The sign-in browser could not be shown."
        case .keyUnavailable: summary = "The device key for proof of possession (DPoP) is unavailable."
        case .storage: summary = "The sign-in state could not be stored."
        case .deviceKeyUnavailable: summary = "This device's key or certificate is unavailable."
        case .deviceNotActivated: summary = "This device is not activated."
        case .authenticatorNotRegistered: summary = "This way of signing in is not registered on this device. Set it up again."
        case .authenticatorInvalidated:
            summary = "This way of signing in was reset by the phone (lock screen or biometrics changed). Set it up again."
        case .wrongPIN: summary = "The PIN was wrong."
        case .pinCoolingDown: summary = "Too many wrong PINs. Wait before trying again."
        case .pinLockedOut: summary = "Too many wrong PINs: the PIN was removed. Set it up again."
        case .authenticatorRevoked: summary = "This way of signing in was blocked by the service. Set it up again."
        default: summary = "Sign-in failed (\(code.rawValue))."
        }
        var parts = [summary]
        if let detail = serverError?.errorDescription, !detail.isEmpty { parts.append(detail) }
        if let reason { parts.append(reason) }
        return parts.joined(separator: " ")
    }

    /// The error an unsuccessful answer carries.
    static func from(_ response: HTTPTransportResponse) -> SignetClientError {
        guard let body = try? JSONDecoder().decode(APIErrorBody.self, from: response.body) else {
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
        if let failure = error as? DPoPTransport.ProofFailure {
            return failure.underlying as? SignetClientError
                ?? SignetClientError(.keyUnavailable, isRetryable: false, reason: "the DPoP key could not sign", underlying: failure.underlying)
        }
        if let error = error as? SignetError, error.code == .transportFailure {
            return SignetClientError(.transport, isRetryable: true, reason: error.reason, underlying: error)
        }
        return SignetClientError(.invalidResponse, isRetryable: false, underlying: error)
    }
}
