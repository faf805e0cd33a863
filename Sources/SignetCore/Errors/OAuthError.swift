// OAuthError: the error as it travels on the wire (RFC 6749 §4.1.2.1, §5.2).

/// An OAuth 2.0 / OpenID Connect error response, as sent on the wire.
///
/// Distinct from ``SignetError``: this is the protocol's vocabulary
/// (`error`, `error_description`), kept intact when a client receives it.
///
/// Both members only ever hold the characters RFC 6749 §5.2 allows (`%x20-21 / %x23-5B /
/// %x5D-7E`: printable ASCII without `"` and `\`), whatever they are made from: every
/// initialiser, decoding included, passes the text through ``wireSafe(_:)``. So a description
/// that quotes a client's input, or a typographic dash typed by a developer, can never put a
/// byte on the wire (a JSON body, a redirect's query, a `WWW-Authenticate` quoted string) that
/// the RFC forbids. The text is sanitised rather than asserted on, because descriptions quote
/// what a client sent, and a client's input must not be able to stop the server.
public struct OAuthError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// error — RFC 6749 §5.2
    public let error: Code
    /// error_description — RFC 6749 §5.2; human readable, never secret.
    public let errorDescription: String?

    public init(_ error: Code, _ description: String? = nil) {
        self.error = error
        self.errorDescription = description.map(Self.wireSafe)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(try container.decode(Code.self, forKey: .error), try container.decodeIfPresent(String.self, forKey: .errorDescription))
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }

    public var description: String { "\(error.rawValue): \(errorDescription ?? "")" }

    /// Whether every character of `text` is one RFC 6749 §5.2 allows in `error` and
    /// `error_description`: `%x20-21 / %x23-5B / %x5D-7E`.
    public static func isWireSafe(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.allSatisfy(isAllowed)
    }

    /// `text` made wire-safe: typographic dashes, quotes and ellipses become their ASCII
    /// look-alikes (a `"` becomes `'`), `\` becomes `/`, `§` becomes `section `, any other
    /// space or line break a space, and anything else outside the set a `?`.
    public static func wireSafe(_ text: String) -> String {
        if isWireSafe(text) { return text }
        var safe = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isAllowed(scalar) {
                safe.append(scalar)
                continue
            }
            let replacement: String
            switch scalar {
            case "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2015}", "\u{2212}": replacement = "-"
            case "\"", "\u{2018}", "\u{2019}", "\u{201A}", "\u{201B}", "\u{201C}", "\u{201D}", "\u{201E}", "\u{201F}", "\u{2032}", "\u{2033}":
                replacement = "'"
            case "\u{2026}": replacement = "..."
            case "\\": replacement = "/"
            case "\u{00A7}": replacement = "section "
            default: replacement = scalar.properties.isWhitespace ? " " : "?"
            }
            safe.append(contentsOf: replacement.unicodeScalars)
        }
        return String(safe)
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20...0x21, 0x23...0x5B, 0x5D...0x7E: true
        default: false
        }
    }

    /// An OAuth error code (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1, OIDC Core §3.1.2.6).
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral {
        public let rawValue: String
        /// A code as received; made wire-safe like every description (``OAuthError/wireSafe(_:)``).
        public init(rawValue: String) { self.rawValue = OAuthError.wireSafe(rawValue) }
        /// A code written in the source, which must already be wire-safe (checked in debug builds).
        public init(stringLiteral value: String) {
            assert(OAuthError.isWireSafe(value), "an OAuth error code must be printable ASCII without quote or backslash (RFC 6749 §5.2)")
            self.rawValue = OAuthError.wireSafe(value)
        }
        public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
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
        /// invalid_request_uri — RFC 9101 §6.2, RFC 9126 §4: the request_uri is unknown, expired, used or not this client's.
        public static let invalidRequestURI: Code = "invalid_request_uri"
        /// invalid_target — RFC 8707 §2: a resource is unknown or not allowed for this client.
        public static let invalidTarget: Code = "invalid_target"
        /// use_dpop_nonce — RFC 9449 §8: send the proof again with the nonce in `DPoP-Nonce`.
        public static let useDPoPNonce: Code = "use_dpop_nonce"
        /// invalid_dpop_proof — RFC 9449 §7.1: the DPoP proof is missing, malformed or does not match.
        public static let invalidDPoPProof: Code = "invalid_dpop_proof"
        /// invalid_request_object — RFC 9101 §6.2.
        public static let invalidRequestObject: Code = "invalid_request_object"
        public static let unsupportedTokenType: Code = "unsupported_token_type"
        public static let slowDown: Code = "slow_down"
        /// insufficient_user_authentication — RFC 9470 §3: the login behind the token is too old or too weak; log in again.
        public static let insufficientUserAuthentication: Code = "insufficient_user_authentication"
        /// device_certificate_required — Signet (docs/devices.md): the endpoint needs the device's client certificate (mutual TLS).
        public static let deviceCertificateRequired: Code = "device_certificate_required"
        /// invalid_device_certificate — Signet: the client certificate is not a valid device certificate of this provider.
        public static let invalidDeviceCertificate: Code = "invalid_device_certificate"
        /// device_not_activated — Signet: the certificate names no activated device, or not its current certificate.
        public static let deviceNotActivated: Code = "device_not_activated"
        /// device_revoked — Signet: the device was deactivated, replaced, removed or locked; activate again.
        public static let deviceRevoked: Code = "device_revoked"
        /// invalid_uaf_message — Signet (docs/authenticators.md): the UAF message is malformed, tampered with, or not for this request.
        public static let invalidUAFMessage: Code = "invalid_uaf_message"
        /// uaf_request_expired — Signet: the UAF request's two minutes are over; ask for a new one.
        public static let uafRequestExpired: Code = "uaf_request_expired"
        /// uaf_request_used — Signet: this UAF request was answered already (each is single use).
        public static let uafRequestUsed: Code = "uaf_request_used"
        /// untrusted_facet — Signet: the appID or facet id is not one the client trusts.
        public static let untrustedFacet: Code = "untrusted_facet"
        /// unacceptable_authenticator — Signet: the AAID, algorithm, key or attestation is outside the client's policy.
        public static let unacceptableAuthenticator: Code = "unacceptable_authenticator"
        /// authenticator_limit — Signet: the device has as many authenticators as it may.
        public static let authenticatorLimit: Code = "authenticator_limit"
        /// unknown_authenticator — Signet: no such authenticator is registered on this device (removed, or never); register again.
        public static let unknownAuthenticator: Code = "unknown_authenticator"
        /// no_authenticator — Signet: the device has no authenticator the request can use; register one.
        public static let noAuthenticator: Code = "no_authenticator"
        /// invalid_signature — Signet: the assertion's signature does not verify.
        public static let invalidSignature: Code = "invalid_signature"
        /// authenticator_revoked — Signet: the authenticator's counter went backwards (possibly cloned); it is refused from now on.
        public static let authenticatorRevoked: Code = "authenticator_revoked"
        /// transaction_mismatch — Signet: the confirmed transaction is not the one shown.
        public static let transactionMismatch: Code = "transaction_mismatch"
        /// wrong_pin — Signet: the PIN was wrong; `pin` says how many tries are left and any cool-down.
        public static let wrongPIN: Code = "wrong_pin"
        /// pin_cool_down — Signet: too many wrong PINs; wait `retry_after` seconds (nothing was checked).
        public static let pinCoolDown: Code = "pin_cool_down"
        /// pin_locked_out — Signet: the fifth wrong PIN removed the PIN authenticator; register it again.
        public static let pinLockedOut: Code = "pin_locked_out"
    }
}
