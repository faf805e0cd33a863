// What an API learns from an access token that passed every check (RFC 9068 §2.2).
import Foundation

/// An access token that was verified for this API: its subject, client, scopes and binding.
///
/// Holds no secret (not the token itself), so it may be logged.
public struct VerifiedAccessToken: Sendable, Equatable {
    /// iss — RFC 9068 §2.2: the provider that issued the token.
    public let issuer: String
    /// sub — RFC 9068 §2.2: the user (or, for client credentials, the client) the token is about.
    public let subject: String
    /// client_id — RFC 9068 §2.2: the OAuth client the token was issued to.
    public let clientID: String
    /// aud — RFC 9068 §2.2: every resource the token is for; this API's is among them.
    public let audience: [String]
    /// scope — RFC 9068 §2.2.3: the scopes granted, in the token's order.
    public let scopes: [String]
    /// exp — RFC 9068 §2.2.
    public let expiresAt: Date
    /// iat — RFC 9068 §2.2.
    public let issuedAt: Date
    /// jti — RFC 9068 §2.2: the token's identifier, when present.
    public let tokenID: String?
    /// acr — RFC 9068 §2.2.1: the authentication context class of the login.
    public let acr: String?
    /// amr — RFC 9068 §2.2.1: the authentication methods of the login.
    public let amr: [String]?
    /// auth_time — RFC 9068 §2.2.1: when the user last authenticated.
    public let authTime: Date?
    /// cnf.jkt — RFC 9449 §6.1: the DPoP key thumbprint the token is bound to, proven by this
    /// request; `nil` for a bearer token.
    public let dpopThumbprint: String?
    /// cnf.x5t#S256 — RFC 8705 §3.1: the client certificate the token is bound to (checked
    /// against the request's), or `nil`.
    public let certificateThumbprint: String?

    /// A verified token with the given claims: for the verifier, and for tests of an API's routes.
    public init(
        issuer: String, subject: String, clientID: String, audience: [String], scopes: [String], expiresAt: Date, issuedAt: Date,
        tokenID: String? = nil, acr: String? = nil, amr: [String]? = nil, authTime: Date? = nil, dpopThumbprint: String? = nil,
        certificateThumbprint: String? = nil
    ) {
        self.issuer = issuer
        self.subject = subject
        self.clientID = clientID
        self.audience = audience
        self.scopes = scopes
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.tokenID = tokenID
        self.acr = acr
        self.amr = amr
        self.authTime = authTime
        self.dpopThumbprint = dpopThumbprint
        self.certificateThumbprint = certificateThumbprint
    }

    /// Whether every scope in `required` was granted.
    public func hasScopes(_ required: some Sequence<String>) -> Bool {
        let granted = Set(scopes)
        return required.allSatisfy(granted.contains)
    }

    /// Whether the token is sender-constrained (DPoP-bound) — RFC 9449 §6.
    public var isSenderConstrained: Bool { dpopThumbprint != nil || certificateThumbprint != nil }
}

/// The claims of a JWT access token as received, every one optional, so a missing claim is a
/// reason rather than a decoding error — RFC 9068 §2.2.
struct ReceivedAccessTokenClaims: Decodable {
    var iss: String?
    var sub: String?
    var aud: [String]?
    var clientID: String?
    var exp: Int?
    var nbf: Int?
    var iat: Int?
    var jti: String?
    var scope: String?
    var acr: String?
    var amr: [String]?
    var authTime: Int?
    var cnf: Confirmation?

    struct Confirmation: Decodable {
        var jkt: String?
        /// x5t#S256 — RFC 8705 §3.1.
        var x5tS256: String?
        enum CodingKeys: String, CodingKey {
            case jkt
            case x5tS256 = "x5t#S256"
        }
    }

    /// A claim that is present but of the wrong type, so the token cannot be judged.
    struct WrongType: Error {}

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, nbf, iat, jti, scope, acr, amr, cnf
        case clientID = "client_id"
        case authTime = "auth_time"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decodeIfPresent(String.self, forKey: .iss)
        sub = try container.decodeIfPresent(String.self, forKey: .sub)
        // aud — RFC 7519 §4.1.3: one string or an array of strings.
        if let single = try? container.decodeIfPresent(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decodeIfPresent([String].self, forKey: .aud)
        }
        clientID = try container.decodeIfPresent(String.self, forKey: .clientID)
        exp = try Self.numericDate(container, .exp)
        nbf = try Self.numericDate(container, .nbf)
        iat = try Self.numericDate(container, .iat)
        jti = try container.decodeIfPresent(String.self, forKey: .jti)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        acr = try container.decodeIfPresent(String.self, forKey: .acr)
        amr = try container.decodeIfPresent([String].self, forKey: .amr)
        authTime = try Self.numericDate(container, .authTime)
        cnf = try container.decodeIfPresent(Confirmation.self, forKey: .cnf)
    }

    /// A NumericDate — RFC 7519 §2: seconds, possibly with a fraction, rounded down.
    private static func numericDate(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Int? {
        guard let seconds = try container.decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard seconds.isFinite, abs(seconds) < 1e15 else { throw WrongType() }
        return Int(seconds.rounded(.down))
    }
}
