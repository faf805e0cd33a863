// Issuing the code that ends a successful authorization (RFC 6749 §4.1.2).
import Foundation
import SignetCore
import SignetStore

/// An authorization code just issued, and the redirect URL that delivers it.
public struct IssuedCode: Sendable, CustomStringConvertible {
    /// code — RFC 6749 §4.1.2. A secret: never logged.
    public let code: String
    /// The redirect URI with `code`, `state` and `iss` (RFC 9207) in its query.
    public let location: String

    public var description: String { "IssuedCode(****)" }
}

/// Creates a grant and the single-use code that redeems it.
public struct AuthorizationCodeIssuer: Sendable {
    let server: ServerContext
    let grants: any GrantStore
    /// Where the instance id a login activates is claimed for its user.
    let devices: any DeviceStore
    /// Read for the client's own code and grant lifetimes.
    let clients: any ClientStore
    /// The provider's lifetimes; a client's own override them.
    let lifetimes: TokenLifetimes

    /// Creates the grant and a code bound to client, redirect URI, PKCE challenge, nonce, scope
    /// and authentication.
    public func issue(for request: ValidatedAuthorizationRequest, authentication: Authentication) async throws -> IssuedCode {
        let now = server.now()
        let client = try await clients.client(id: request.clientID)
        let lifetimes = client.map(lifetimes.overridden(by:)) ?? lifetimes
        // The first user whose login binds an instance id keeps it: nobody else can activate it.
        if let instanceID = request.instanceID, try await !devices.claimDeviceInstance(id: instanceID, userID: authentication.userID, now: now) {
            throw OAuthHTTPError(.forbidden, .accessDenied, "this instance id is being activated by another user, or has expired")
        }
        let grant = GrantRecord(
            id: server.random.token(byteCount: 16), clientID: request.clientID, userID: authentication.userID, scope: request.scope,
            authTime: authentication.time, acr: authentication.acr, amr: authentication.amr, sessionID: authentication.sessionID,
            createdAt: now, expiresAt: now.addingTimeInterval(lifetimes.refreshTokenAbsolute))
        var stamped = grant
        stamped.userStamp = authentication.userStamp
        stamped.resources = request.resources
        stamped.instanceID = request.instanceID
        stamped.deviceID = authentication.deviceID
        try await grants.insertGrant(stamped)
        let code = server.random.token()
        try await grants.insertCode(
            AuthorizationCodeRecord(
                codeHash: SecretDigest.hex(code), grantID: grant.id, clientID: request.clientID, redirectURI: request.redirectURI,
                codeChallenge: request.codeChallenge, nonce: request.nonce, expiresAt: now.addingTimeInterval(lifetimes.code)
            ).boundTo(request.dpopJKT))
        var response = FormParameters()
        response.append(OAuthParameter.code, code)
        response.append(OAuthParameter.state, request.state)
        response.append(OAuthParameter.issuer, server.issuer)
        return IssuedCode(code: code, location: AuthorizationResponse.url(request.redirectURI, parameters: response))
    }
}

extension AuthorizationCodeRecord {
    /// The same code, redeemable only with a DPoP proof of key `jkt` (when given).
    func boundTo(_ jkt: String?) -> AuthorizationCodeRecord {
        var bound = self
        bound.dpopJKT = jkt
        return bound
    }
}
