// The token endpoint's success response (RFC 6749 §5.1, OIDC Core §3.1.3.3).

/// A successful token response.
public struct TokenResponse: Sendable, Codable, Equatable {
    /// access_token — RFC 6749 §5.1
    public var accessToken: String
    /// token_type — RFC 6749 §5.1; always `Bearer` here.
    public var tokenType: String
    /// expires_in — RFC 6749 §5.1, seconds; RECOMMENDED, so other providers may leave it out.
    public var expiresIn: Int?
    /// refresh_token — RFC 6749 §5.1
    public var refreshToken: String?
    /// id_token — OIDC Core §3.1.3.3
    public var idToken: String?
    /// scope — RFC 6749 §5.1
    public var scope: String?

    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int?, refreshToken: String?, idToken: String?, scope: String?) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
    }
}

extension TokenResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The response with every token printed as `****`, so logs and test failures leak none.
    public var description: String {
        "TokenResponse(token_type: \(tokenType), access_token: ****, expires_in: \(expiresIn.map(String.init) ?? "none"), "
            + "refresh_token: \(refreshToken == nil ? "none" : "****"), id_token: \(idToken == nil ? "none" : "****"), scope: \(scope ?? "none"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension TokenResponse: JSONObjectWritable {
    /// The same members as the `Codable` conformance, in sorted order as the provider's JSON responses are.
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("access_token", accessToken)
        object.member("expires_in", expiresIn)
        object.member("id_token", idToken)
        object.member("refresh_token", refreshToken)
        object.member("scope", scope)
        object.member("token_type", tokenType)
    }
}
