// Minting access tokens (RFC 9068), ID tokens (OIDC Core §2) and refresh tokens.
import Foundation
import SignetCore

extension Provider {
    /// Issues the tokens of a grant: a JWT access token, an ID token when `openid` was granted,
    /// and a refresh token when the client may refresh.
    ///
    /// - Parameter nonce: the authorization request's nonce; absent on refresh (OIDC Core §12.2).
    func issueTokens(grant: GrantRecord, client: ClientRecord, user: UserRecord, scope: String, nonce: String?) async throws -> TokenResponse {
        let now = now()
        let issuedAt = epochSeconds(now)
        let scopes = Set(scope.split(separator: " ").map(String.init))
        let accessClaims = AccessTokenClaims(
            iss: issuer, sub: user.id, aud: issuer, clientID: client.id,
            exp: issuedAt + Int(configuration.accessTokenLifetime), iat: issuedAt, jti: random.token(byteCount: 16), scope: scope,
            authTime: epochSeconds(grant.authTime), acr: grant.acr, amr: grant.amr, grantID: grant.id)
        let accessToken = try await keys.sign(accessClaims, type: "at+jwt")

        var idToken: String?
        if scopes.contains("openid") {
            var claims = IDTokenClaims(
                iss: issuer, sub: user.id, aud: [client.id], azp: client.id,
                exp: issuedAt + Int(configuration.idTokenLifetime), iat: issuedAt, authTime: epochSeconds(grant.authTime),
                nonce: nonce, acr: grant.acr, amr: grant.amr, atHash: TokenHash.sha256Half(of: accessToken), sid: grant.sessionID)
            UserClaims.apply(user, scopes: scopes, to: &claims)
            idToken = try await keys.sign(claims, type: "JWT")
        }

        var refreshToken: String?
        if client.allowsRefreshTokens {
            let token = random.token()
            let expiresAt = min(now.addingTimeInterval(configuration.refreshTokenLifetime), grant.expiresAt)
            try await store.insertRefreshToken(
                RefreshTokenRecord(tokenHash: SecretDigest.hex(token), grantID: grant.id, clientID: client.id, expiresAt: expiresAt))
            refreshToken = token
        }
        return TokenResponse(
            accessToken: accessToken, expiresIn: Int(configuration.accessTokenLifetime), refreshToken: refreshToken, idToken: idToken,
            scope: scope)
    }
}

/// The user claims each scope releases — OIDC Core §5.4.
enum UserClaims {
    static func apply(_ user: UserRecord, scopes: Set<String>, to claims: inout IDTokenClaims) {
        if scopes.contains("profile") {
            claims.name = user.name
            claims.preferredUsername = user.username
        }
        if scopes.contains("email") { claims.email = user.email }
        if scopes.contains("phone") { claims.phoneNumber = user.phoneNumber }
    }

    /// The userinfo response body for these scopes.
    static func userInfo(_ user: UserRecord, scopes: Set<String>) -> [String: String] {
        var body = ["sub": user.id]
        if scopes.contains("profile") {
            body["preferred_username"] = user.username
            body["name"] = user.name
        }
        if scopes.contains("email") { body["email"] = user.email }
        if scopes.contains("phone") { body["phone_number"] = user.phoneNumber }
        return body
    }
}
