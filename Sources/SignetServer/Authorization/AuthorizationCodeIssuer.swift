// Issuing the code that ends a successful authorization (RFC 6749 §4.1.2).
import Foundation
import SignetCore

/// How the user was authenticated, for `auth_time`, `acr` and `amr`.
public struct Authentication: Sendable, Equatable {
    public var userID: String
    public var time: Date
    /// acr — OIDC Core §2
    public var acr: String
    /// amr — OIDC Core §2, RFC 8176 values (`pwd`, `sms`, `mfa`, …)
    public var amr: [String]
    /// The browser session it belongs to, if any (its public `sid`).
    public var sessionID: String?

    public init(userID: String, time: Date, acr: String, amr: [String], sessionID: String?) {
        self.userID = userID
        self.time = time
        self.acr = acr
        self.amr = amr
        self.sessionID = sessionID
    }
}

extension Provider {
    /// Creates the grant and a single-use code bound to client, redirect URI, PKCE challenge,
    /// nonce, scope and authentication; returns the redirect URL carrying `code`, `state` and `iss`.
    public func issueCode(for request: ValidatedAuthorizationRequest, authentication: Authentication) async throws -> String {
        let now = now()
        let grant = GrantRecord(
            id: random.token(byteCount: 16), clientID: request.clientID, userID: authentication.userID, scope: request.scope,
            authTime: authentication.time, acr: authentication.acr, amr: authentication.amr, sessionID: authentication.sessionID,
            createdAt: now, expiresAt: now.addingTimeInterval(configuration.grantLifetime))
        try await store.insertGrant(grant)
        let code = random.token()
        try await store.insertCode(
            AuthorizationCodeRecord(
                codeHash: SecretDigest.hex(code), grantID: grant.id, clientID: request.clientID, redirectURI: request.redirectURI,
                codeChallenge: request.codeChallenge, nonce: request.nonce,
                expiresAt: now.addingTimeInterval(configuration.authorizationCodeLifetime)))
        var response = FormParameters()
        response.append(OAuthParameter.code, code)
        response.append(OAuthParameter.state, request.state)
        response.append(OAuthParameter.issuer, issuer)
        return AuthorizationResponse.url(request.redirectURI, parameters: response)
    }
}

/// Builds authorization responses (RFC 6749 §4.1.2, RFC 9207 §2).
public enum AuthorizationResponse {
    /// `redirectURI` with `parameters` added to its query.
    public static func url(_ redirectURI: String, parameters: FormParameters) -> String {
        let separator = redirectURI.contains("?") ? "&" : "?"
        return redirectURI + separator + parameters.encoded
    }

    /// The error redirect of RFC 6749 §4.1.2.1 with `iss` (RFC 9207).
    public static func errorURL(_ error: OAuthError, redirectURI: String, state: String?, issuer: String) -> String {
        var parameters = FormParameters()
        parameters.append(OAuthParameter.error, error.error.rawValue)
        parameters.append(OAuthParameter.errorDescription, error.errorDescription)
        parameters.append(OAuthParameter.state, state)
        parameters.append(OAuthParameter.issuer, issuer)
        return url(redirectURI, parameters: parameters)
    }
}
