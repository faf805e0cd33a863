// The token a user's own device management takes: a login of theirs, for this provider alone.
import Foundation
import Hummingbird
import SignetCore

extension OwnResourceAccess {
    /// A verified token of a login of the user, for this provider alone, from a client allowed to
    /// manage devices (the scope `device`), with the assurance that client requires.
    ///
    /// The token itself need not carry the scope `device`: a login with it must activate an
    /// instance (MEPi's rule), while managing the list is any login's business.
    func deviceUserToken(_ request: Request, context: SignetRequestContext, path: String) async throws -> AccessTokenClaims {
        let claims = try await verify(request, context: context, path: path, formBody: false).claims
        // A token that also names other APIs (RFC 8707) could be replayed here by one of them.
        guard Set(claims.aud) == [server.issuer] else {
            throw OwnResourceAccess.challenge(
                .invalidToken, "managing devices needs a token for this provider alone, not one that names other resources", status: .unauthorized)
        }
        let client = try await clients.client(id: claims.clientID)
        guard let client, client.allowedScopes.contains(DeviceInstances.scope) else {
            throw OwnResourceAccess.challenge(.insufficientScope, "this app may not manage devices (it lacks the scope device)", status: .forbidden)
        }
        if let minimum = client.minimumACR, !AssuranceLevel.satisfies(acr: claims.acr ?? "", requested: [minimum]) {
            throw OwnResourceAccess.stepUpChallenge("this needs a login of at least \(minimum)", acrValues: minimum)
        }
        return claims
    }
}
