// Checking Signet's own JWT access tokens (RFC 9068 §4) for its protected endpoints.
import Foundation
import SignetCore

extension Provider {
    /// The claims of a live access token issued here, or `nil`: signature, `typ` at+jwt,
    /// issuer, audience, expiry, and a grant that has not been revoked.
    func verifyAccessToken(_ token: String) async throws -> AccessTokenClaims? {
        guard token.utf8.count <= 8192,
            let claims = await keys.verifyOwn(token, as: AccessTokenClaims.self, expectedType: "at+jwt"),
            claims.iss == issuer, claims.aud == issuer,
            claims.exp > epochSeconds(now())
        else { return nil }
        guard let grant = try await store.grant(id: claims.grantID), grant.revokedAt == nil else { return nil }
        return claims
    }

    /// The claims of an ID token this provider issued, for `id_token_hint` (OIDC Core §3.1.2.1):
    /// signature, `typ` JWT (never an access token) and issuer. Expiry is not checked: hints may be old.
    func verifyIDTokenHint(_ token: String) async -> IDTokenClaims? {
        guard token.utf8.count <= 8192, let claims = await keys.verifyOwn(token, as: IDTokenClaims.self, expectedType: "JWT"), claims.iss == issuer else {
            return nil
        }
        return claims
    }
}
