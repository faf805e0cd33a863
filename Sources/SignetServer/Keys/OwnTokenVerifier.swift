// Checking tokens this provider issued: access tokens at its endpoints, ID tokens as hints.
import Foundation
import SignetCore
import SignetJOSE
import SignetStore

/// Verifies Signet's own JWTs against its key ring.
struct OwnTokenVerifier: Sendable {
    let keys: KeyRing
    let grants: any GrantStore
    let users: any UserStore
    /// The issuer identifier is read when a token is checked (it may be learned once the port is bound).
    let server: ServerContext

    /// A live access token issued here, with its user.
    struct VerifiedOwnToken: Sendable {
        let claims: AccessTokenClaims
        let user: UserRecord
    }

    /// The claims of a live access token issued here (RFC 9068 §4) and its user, or `nil`:
    /// signature, `typ` at+jwt, issuer, audience, expiry, a grant that has not been revoked, and
    /// a user who is not locked and has not changed password since the grant was made.
    func accessToken(_ token: String) async throws -> VerifiedOwnToken? {
        let issuer = server.issuer
        guard token.utf8.count <= 8192,
            let claims = await keys.verifyOwn(token, as: AccessTokenClaims.self, expectedType: "at+jwt"),
            claims.iss == issuer, claims.aud.contains(issuer),
            claims.exp > Int(server.now().timeIntervalSince1970)
        else { return nil }
        guard let grant = try await grants.grant(id: claims.grantID), grant.revokedAt == nil,
            let user = try await users.user(id: grant.userID), !user.locked, user.securityStamp == grant.userStamp
        else { return nil }
        return VerifiedOwnToken(claims: claims, user: user)
    }

    /// The claims of an ID token this provider issued, for `id_token_hint` (OIDC Core §3.1.2.1):
    /// signature, `typ` JWT (never an access token) and issuer. Expiry is not checked: hints may be old.
    func idTokenHint(_ token: String) async -> IDTokenClaims? {
        guard token.utf8.count <= 8192, let claims = await keys.verifyOwn(token, as: IDTokenClaims.self, expectedType: "JWT"),
            claims.iss == server.issuer
        else {
            return nil
        }
        return claims
    }
}
