// OAuthError: the error as it travels on the wire (RFC 6749 §4.1.2.1, §5.2).

/// An OAuth 2.0 / OpenID Connect error response, as sent on the wire.
///
/// Distinct from ``SignetError``: this is the protocol's vocabulary
/// (`error`, `error_description`), kept intact when a client receives it.
public struct OAuthError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// error — RFC 6749 §5.2
    public var error: Code
    /// error_description — RFC 6749 §5.2; human readable, never secret.
    public var errorDescription: String?

    public init(_ error: Code, _ description: String? = nil) {
        self.error = error
        self.errorDescription = description
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }

    public var description: String { "\(error.rawValue): \(errorDescription ?? "")" }

    /// An OAuth error code (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1, OIDC Core §3.1.2.6).
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public init(from decoder: any Decoder) throws { self.rawValue = try decoder.singleValueContainer().decode(String.self) }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        public static let invalidRequest: Code = "invalid_request"
        public static let invalidClient: Code = "invalid_client"
        public static let invalidGrant: Code = "invalid_grant"
        public static let unauthorizedClient: Code = "unauthorized_client"
        public static let unsupportedGrantType: Code = "unsupported_grant_type"
        public static let unsupportedResponseType: Code = "unsupported_response_type"
        public static let invalidScope: Code = "invalid_scope"
        public static let accessDenied: Code = "access_denied"
        public static let serverError: Code = "server_error"
        public static let temporarilyUnavailable: Code = "temporarily_unavailable"
        public static let invalidToken: Code = "invalid_token"
        public static let insufficientScope: Code = "insufficient_scope"
        public static let loginRequired: Code = "login_required"
        public static let interactionRequired: Code = "interaction_required"
        public static let consentRequired: Code = "consent_required"
        public static let requestNotSupported: Code = "request_not_supported"
        public static let requestURINotSupported: Code = "request_uri_not_supported"
        public static let unsupportedTokenType: Code = "unsupported_token_type"
        public static let slowDown: Code = "slow_down"
    }
}
