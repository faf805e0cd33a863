// POST /revoke — RFC 7009.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// Revokes a refresh or access token, and with it the whole grant it came from (RFC 7009 §2.1).
///
/// Only its holder may: the client it was issued to, authenticated; and, for a public client,
/// whose `client_id` proves nothing, the key or device the token is bound to (a DPoP proof of
/// that key, the device's certificate), as a refresh with it would need, and as the token
/// endpoint asks before a reused refresh token revokes its family. A copy of a bound token ends
/// nothing, and gets the same 200 as an unknown token (§2.2), revealing nothing.
struct RevocationEndpoint: Sendable {
    let server: ServerContext
    let grants: any GrantStore
    let ownTokens: OwnTokenVerifier
    let audit: AuditTrail
    let maxBodySize: Int
    let authenticator: ClientAuthenticator
    let dpop: DPoPProofVerifier
    let devices: DeviceIdentification

    func handle(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let parameters = try await RequestParameters.form(request, maxBodySize: maxBodySize)
        if let duplicated = parameters.duplicatedNames.first {
            throw OAuthHTTPError.invalidRequest("\(duplicated.prefix(64)) must not be repeated")
        }
        let proof = try await dpop.proof(of: request, at: server.endpoint("/revoke"))
        let client = try await authenticator.authenticate(request, parameters: parameters, endpoints: [server.endpoint("/token")])
        context.facts.clientID = client.id
        guard let token = parameters[OAuthParameter.token], !token.isEmpty else { throw OAuthHTTPError.invalidRequest("token is missing") }
        guard token.utf8.count <= 8192 else { throw OAuthHTTPError.invalidRequest("token is too long") }
        if let hint = parameters[OAuthParameter.tokenTypeHint], !["access_token", "refresh_token"].contains(hint) {
            throw OAuthHTTPError(.badRequest, .unsupportedTokenType, "token_type_hint must be access_token or refresh_token")
        }
        var device: AuthenticatedDevice?
        if case .device(let presented) = try await devices.identify(request, context: context) { device = presented }
        let holder = Holder(client: client, proof: proof, device: device)
        let now = server.now()
        var revoked: (grantID: String, userID: String?)?
        if let refresh = try await grants.refreshToken(hash: SecretDigest.hex(token)) {
            // Spent or not, as a reuse at /token would: its holder ends the grant.
            if refresh.clientID == client.id {
                let grant = try await grants.grant(id: refresh.grantID)
                if holder.holds(jkt: refresh.dpopJKT, deviceID: grant?.deviceID) {
                    try await grants.revokeGrant(id: refresh.grantID, at: now)
                    revoked = (refresh.grantID, grant?.userID)
                }
            }
        } else if let claims = try await ownTokens.accessToken(token)?.claims, claims.clientID == client.id {
            // Its own binding, and the grant's device: an activation's login is tied to the
            // device after its first access token was issued without the certificate.
            let grant = claims.cnf?.x5tS256 == nil && client.authMethod == .none ? try await grants.grant(id: claims.grantID) : nil
            if holder.holds(jkt: claims.cnf?.jkt, deviceID: grant?.deviceID, certificateThumbprint: claims.cnf?.x5tS256) {
                try await grants.revokeGrant(id: claims.grantID, at: now)
                revoked = (claims.grantID, claims.sub)
            }
        }
        if let revoked {
            try await audit.record("token.revoked", userID: revoked.userID, clientID: client.id, actor: .client, target: revoked.grantID)
        }
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    /// Who asks: the authenticated client, and what it proves it holds.
    private struct Holder {
        let client: ClientRecord
        let proof: DPoPProof?
        let device: AuthenticatedDevice?

        /// Whether the request may end a token bound as given. A confidential client's
        /// authentication is enough; a public client shows the DPoP key (`jkt`) and the device
        /// (its instance, or its certificate's thumbprint) the token is bound to.
        func holds(jkt: String?, deviceID: String? = nil, certificateThumbprint: String? = nil) -> Bool {
            guard client.authMethod == .none else { return true }
            if let jkt, proof?.jkt != jkt { return false }
            if let deviceID, device?.instanceID != deviceID { return false }
            if let certificateThumbprint, device?.thumbprint != certificateThumbprint { return false }
            return true
        }
    }
}
