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
}
