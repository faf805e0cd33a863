// GET and POST /userinfo — OIDC Core §5.3, bearer tokens per RFC 6750.
import Foundation
import Hummingbird
import SignetCore

/// Returns the claims about the user that the access token's scopes release.
struct UserInfoEndpoint: Sendable {
    let access: OwnResourceAccess

    func handle(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let verified = try await access.verify(request, context: context, path: "/userinfo", formBody: true)
        let claims = verified.claims
        let scopes = Set(claims.scope.split(separator: " ").map(String.init))
        guard scopes.contains("openid") else {
            throw OwnResourceAccess.challenge(.insufficientScope, "the openid scope is required", status: .forbidden)
        }
        return JSONResponse.make(UserClaims.userInfo(verified.user, scopes: scopes))
    }
}
