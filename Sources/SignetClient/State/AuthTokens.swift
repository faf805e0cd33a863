// The tokens of a signed-in user, as the SDK keeps them.
import Foundation
import SignetCore

/// A token response the SDK has checked: its token type, and its ID token's claims.
///
/// Stored by ``AuthStateStorage`` with explicit keys and a version, so a later SDK can read
/// what an earlier one wrote. Prints its tokens as `****`.
public struct AuthTokens: Sendable, Equatable, Codable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token response as the token endpoint sent it (with the previous refresh token kept
    /// when a refresh answer left it out).
    public var tokens: TokenResponse
    /// When the access token expires (`expires_in` after it was received; 5 minutes when absent).
    public var accessTokenExpiresAt: Date
    /// The claims of the validated ID token: of the sign-in, or of the latest refresh that sent one.
    public var idTokenClaims: IDTokenClaims?

    public init(tokens: TokenResponse, accessTokenExpiresAt: Date, idTokenClaims: IDTokenClaims?) {
        self.tokens = tokens
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.idTokenClaims = idTokenClaims
    }

    /// The access token.
    public var accessToken: String { tokens.accessToken }
    /// Whether the access token is bound to the app's DPoP key (token_type `DPoP`, RFC 9449 §5):
    /// it must be sent with the DPoP scheme and a proof.
    public var isDPoPBound: Bool { tokens.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame }

    /// The stored format; bumped when a stored field changes meaning.
    static let version = 2

    enum CodingKeys: String, CodingKey {
        case version, tokens, accessTokenExpiresAt, idTokenClaims
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Version 1 (no version member) had tokens and accessTokenExpiresAt only.
        let version = try container.decodeIfPresent(Int.self, forKey: .version) ?? 1
        guard version <= Self.version else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: container, debugDescription: "stored by a newer SDK (version \(version))")
        }
        tokens = try container.decode(TokenResponse.self, forKey: .tokens)
        accessTokenExpiresAt = try container.decode(Date.self, forKey: .accessTokenExpiresAt)
        idTokenClaims = try container.decodeIfPresent(IDTokenClaims.self, forKey: .idTokenClaims)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.version, forKey: .version)
        try container.encode(tokens, forKey: .tokens)
        try container.encode(accessTokenExpiresAt, forKey: .accessTokenExpiresAt)
        try container.encodeIfPresent(idTokenClaims, forKey: .idTokenClaims)
    }

    public var description: String {
        "AuthTokens(type: \(tokens.tokenType), accessToken: ****, refreshToken: \(tokens.refreshToken == nil ? "none" : "****"), "
            + "idToken: \(tokens.idToken == nil ? "none" : "****"), expiresAt: \(accessTokenExpiresAt), sub: \(idTokenClaims?.sub ?? "none"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
