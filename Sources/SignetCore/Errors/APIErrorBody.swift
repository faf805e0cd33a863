// The error shape of Signet's JSON APIs other than the OAuth endpoints (docs/design.md, "Errors").

/// The error body of Signet's JSON APIs that are not OAuth endpoints (the native login API, the
/// admin API, an outage's answer): OAuth's `error` and `error_description`, plus whether the same
/// request or login can go on and the hints for doing so. `error` is a stable code.
///
/// The initialiser makes `error` and `error_description` wire-safe as ``OAuthError`` does (RFC 6749 §5.2).
public struct APIErrorBody: Sendable, Equatable, Codable {
    public var error: String
    public var errorDescription: String?
    /// true: the same login can go on; false: start again. Absent in plain OAuth errors.
    public var retryable: Bool?
    public var retryAfter: Int?
    public var attemptsLeft: Int?
    /// The step the same login can go on with, when it can.
    public var nextStep: LoginStep?

    public init(
        error: String, errorDescription: String?, retryable: Bool?, retryAfter: Int? = nil, attemptsLeft: Int? = nil, nextStep: LoginStep? = nil
    ) {
        self.error = OAuthError.wireSafe(error)
        self.errorDescription = errorDescription.map(OAuthError.wireSafe)
        self.retryable = retryable
        self.retryAfter = retryAfter
        self.attemptsLeft = attemptsLeft
        self.nextStep = nextStep
    }

    enum CodingKeys: String, CodingKey {
        case error, retryable
        case errorDescription = "error_description"
        case retryAfter = "retry_after"
        case attemptsLeft = "attempts_left"
        case nextStep = "next_step"
    }
}
