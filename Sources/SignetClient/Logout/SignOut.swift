// Ending a sign-in: token revocation (RFC 7009) and RP-initiated logout (RP-Initiated Logout 1.0).
import Foundation
import SignetCore

extension SignetClient {
    /// Revokes `token` at the provider's revocation_endpoint — RFC 7009 §2.1. Signet revokes the
    /// whole grant, so the refresh token and every access token from it stop working. A client
    /// with a DPoP key sends a proof of it, which a public client's bound tokens need.
    ///
    /// - Parameter hint: token_type_hint — RFC 7009 §2.1 (`refresh_token` or `access_token`).
    /// - Throws: ``SignetClientError`` when the provider did not confirm with 200 (§2.2).
    public func revoke(_ token: String, hint: String? = "refresh_token") async throws {
        let endpoint = try await discover().revocationEndpoint
        var form = FormParameters()
        form.append(OAuthParameter.token, token)
        form.append(OAuthParameter.tokenTypeHint, hint)
        form.append(OAuthParameter.clientID, configuration.clientID)
        // With a proof of the client's DPoP key: a public client's bound tokens are ended only by their holder.
        let response = try await postForm(form, to: endpoint)
        guard response.isSuccess else { throw SignetClientError.from(response) }
    }

    /// The URL that ends the provider's session — RP-Initiated Logout §2: the discovery
    /// `end_session_endpoint` with `id_token_hint`, `client_id`, the configured
    /// `post_logout_redirect_uri` and `state`. Open it in the same ``ExternalUserAgent`` the
    /// sign-in used (an ephemeral session has no provider cookie to end, so there it is optional).
    ///
    /// - Parameters:
    ///   - idTokenHint: id_token_hint — the ID token last issued to this user.
    ///   - state: state — returned on the post-logout redirect, to tie it to this request.
    public func endSessionURL(idTokenHint: String?, state: String? = nil) async throws -> URL {
        let endpoint = try await discover().endSessionEndpoint
        var parameters = FormParameters()
        parameters.append(OAuthParameter.idTokenHint, idTokenHint)
        parameters.append(OAuthParameter.clientID, configuration.clientID)
        parameters.append(OAuthParameter.postLogoutRedirectURI, configuration.postLogoutRedirectURI)
        parameters.append(OAuthParameter.state, state)
        guard URLComponents(string: endpoint)?.scheme != nil, let url = URL(string: parameters.appended(to: endpoint)) else {
            throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the end_session_endpoint is not a URL")
        }
        return url
    }
}

/// What ``AuthState/signOut(endSession:)`` did.
public struct SignOutResult: Sendable {
    /// Whether the provider confirmed revoking the refresh token (RFC 7009 §2.2); `true` too when
    /// there was no refresh token to revoke.
    public var revoked: Bool
    /// Why revocation failed, when it did (offline, provider down). The tokens were forgotten
    /// all the same; the grant ends when the refresh token expires.
    public var revocationError: SignetClientError?
    /// The end-session URL to open, when it was asked for and could be made.
    public var endSessionURL: URL?
    /// The `state` sent in ``endSessionURL``, to compare with the post-logout redirect's.
    public var endSessionState: String?
}
