// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2).
import Foundation
import SignetCore

extension RelyingParty {
    /// The URL to send the user agent to so the provider ends its session — RP-Initiated Logout §2.
    ///
    /// Pass the ID token last issued to this user as a hint so the provider knows whose
    /// session to end and may skip asking; `client_id` is always sent so the provider can
    /// check `post_logout_redirect_uri` against this client's registrations (§3).
    ///
    /// - Parameters:
    ///   - idTokenHint: id_token_hint — RP-Initiated Logout §2.
    ///   - postLogoutRedirectURI: post_logout_redirect_uri — §2; must be registered.
    ///   - state: state — §2; returned on the post-logout redirect.
    /// - Throws: `invalid_configuration` when the provider has no end_session_endpoint.
    public func endSessionURL(idTokenHint: String? = nil, postLogoutRedirectURI: String? = nil, state: String? = nil) async throws -> URL {
        let document = try await discover()
        let endpoint = try Self.checkedEndpoint(document.endSessionEndpoint, name: "end_session_endpoint")
        var parameters = FormParameters()
        parameters.append(OAuthParameter.idTokenHint, idTokenHint)
        parameters.append(OAuthParameter.clientID, configuration.clientID)
        parameters.append(OAuthParameter.postLogoutRedirectURI, postLogoutRedirectURI)
        parameters.append(OAuthParameter.state, state)
        return try Self.url(endpoint, adding: parameters, name: "end_session_endpoint")
    }
}
