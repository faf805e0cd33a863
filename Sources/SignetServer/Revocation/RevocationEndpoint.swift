// POST /revoke — RFC 7009.
import Foundation
import Hummingbird
import SignetCore

/// Revokes a refresh or access token, and with it the whole grant it came from (RFC 7009 §2.1).
struct RevocationEndpoint: Sendable {
    let provider: Provider
    let authenticator: ClientAuthenticator

    func handle(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let parameters = try await RequestParameters.form(request, maxBodySize: provider.configuration.maxBodySize)
        if let duplicated = parameters.duplicatedNames.first {
            throw OAuthHTTPError.invalidRequest("\(duplicated.prefix(64)) must not be repeated")
        }
        let client = try await authenticator.authenticate(request, parameters: parameters, endpoints: [provider.endpoint("/token")])
        context.facts.clientID = client.id
        guard let token = parameters[OAuthParameter.token], !token.isEmpty else { throw OAuthHTTPError.invalidRequest("token is missing") }
        guard token.utf8.count <= 8192 else { throw OAuthHTTPError.invalidRequest("token is too long") }
        if let hint = parameters[OAuthParameter.tokenTypeHint], !["access_token", "refresh_token"].contains(hint) {
            throw OAuthHTTPError(.badRequest, .unsupportedTokenType, "token_type_hint must be access_token or refresh_token")
        }
        let now = provider.now()
        var revoked: (grantID: String, userID: String?)?
        if let refresh = try await provider.store.refreshToken(hash: SecretDigest.hex(token)) {
            if refresh.clientID == client.id {
                try await provider.store.revokeGrant(id: refresh.grantID, at: now)
                revoked = (refresh.grantID, try await provider.store.grant(id: refresh.grantID)?.userID)
            }
        } else if let claims = try await provider.ownTokens.accessToken(token)?.claims, claims.clientID == client.id {
            try await provider.store.revokeGrant(id: claims.grantID, at: now)
            revoked = (claims.grantID, claims.sub)
        }
        if let revoked { try await provider.audit.record("token.revoked", userID: revoked.userID, clientID: client.id, actor: .client, target: revoked.grantID) }
        // RFC 7009 §2.2: unknown or foreign tokens get the same 200, revealing nothing.
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }
}
