// Minting access tokens (RFC 9068), ID tokens (OIDC Core §2) and refresh tokens.
import Foundation
import SignetCore
import SignetJOSE
import SignetStore

/// Signs the tokens of a grant and stores its refresh token.
struct TokenMinter: Sendable {
    let keys: KeyRing
    let refreshTokens: any GrantStore
    /// The provider's lifetimes; a client's own override them (``TokenLifetimes/overridden(by:)``).
    let lifetimes: TokenLifetimes
    /// The issuer (read at each mint: it may be learned once the port is bound), time and randomness.
    let server: ServerContext

    /// A JWT access token, an ID token when `openid` was granted, and a refresh token when the
    /// client may refresh.
    ///
    /// - Parameter nonce: the authorization request's nonce; absent on refresh (OIDC Core §12.2).
    /// - Parameter dpopJKT: the DPoP key the request proved (RFC 9449): the access token is
    ///   bound to it (`cnf.jkt`, token type `DPoP`), and so is a public client's refresh token.
    /// - Parameter audiences: the resources the access token is for (RFC 8707); with none it is
    ///   for this provider alone. The issuer is added when `openid` lets it be used at UserInfo.
    /// - Parameter device: the activated device whose certificate the request came with: the
    ///   access token is bound to it (`cnf.x5t#S256`, RFC 8705 §3) and carries its `attestation`.
    /// - Parameter newRefreshToken: `false` when a refresh keeps the refresh token it was sent.
    func mint(
        grant: GrantRecord, client: ClientRecord, user: UserRecord, scope: String, nonce: String?, dpopJKT: String? = nil,
        device: AuthenticatedDevice? = nil,
        audiences: [String] = [], newRefreshToken: Bool = true
    ) async throws -> TokenResponse {
        let now = server.now()
        let issuer = server.issuer
        let lifetimes = lifetimes.overridden(by: client)
        let issuedAt = Int(now.timeIntervalSince1970)
        let scopes = Set(scope.split(separator: " ").map(String.init))
        let authTime = Int(grant.authTime.timeIntervalSince1970)
        let audience = audiences.isEmpty ? [issuer] : audiences + (scopes.contains("openid") && !audiences.contains(issuer) ? [issuer] : [])
        var accessClaims = AccessTokenClaims(
            iss: issuer, sub: user.id, aud: audience, clientID: client.id,
            exp: issuedAt + Int(lifetimes.accessToken), iat: issuedAt, jti: server.random.token(byteCount: 16), scope: scope,
            authTime: authTime, acr: grant.acr, amr: grant.amr, grantID: grant.id)
        if dpopJKT != nil || device != nil { accessClaims.cnf = Confirmation(jkt: dpopJKT, x5tS256: device?.thumbprint) }
        accessClaims.attestation = device?.record.attestation
        let accessToken = try await keys.sign(accessClaims, type: "at+jwt")

        var idToken: String?
        if scopes.contains("openid") {
            var claims = IDTokenClaims(
                iss: issuer, sub: user.id, aud: [client.id], azp: client.id,
                exp: issuedAt + Int(lifetimes.idToken), iat: issuedAt, authTime: authTime,
                nonce: nonce, acr: grant.acr, amr: grant.amr, atHash: TokenHash.sha256Half(of: accessToken), sid: grant.sessionID)
            UserClaims.apply(user, scopes: scopes, to: &claims)
            claims.instanceID = grant.instanceID
            idToken = try await keys.sign(claims, type: "JWT")
        }

        var refreshToken: String?
        if client.allowsRefreshTokens, newRefreshToken {
            let token = server.random.token()
            let expiresAt = min(now.addingTimeInterval(lifetimes.refreshTokenIdle), grant.expiresAt)
            var record = RefreshTokenRecord(tokenHash: SecretDigest.hex(token), grantID: grant.id, clientID: client.id, expiresAt: expiresAt)
            // A confidential client proves itself at every refresh; a public one proves its DPoP key.
            if client.authMethod == .none { record.dpopJKT = dpopJKT }
            try await refreshTokens.insertRefreshToken(record)
            refreshToken = token
        }
        return TokenResponse(
            accessToken: accessToken, tokenType: dpopJKT == nil ? "Bearer" : "DPoP", expiresIn: Int(lifetimes.accessToken),
            refreshToken: refreshToken,
            idToken: idToken, scope: scope)
    }
}
