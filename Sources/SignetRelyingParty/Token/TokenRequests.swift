// Redeeming codes, refreshing and revoking tokens (RFC 6749 §4.1.3, §6; RFC 7009).
import Foundation
import SignetCore

extension RelyingParty {
    /// Redeems an authorization code at the token endpoint — RFC 6749 §4.1.3, RFC 7636 §4.5.
    ///
    /// Sends grant_type=authorization_code, the code, the same redirect_uri and the PKCE
    /// code_verifier, authenticated as configured. The ID token in the answer is not yet
    /// checked: pass it to ``validateIDToken(_:pending:accessToken:)``, or use
    /// ``completeAuthorization(redirect:pending:)`` which does both.
    ///
    /// - Throws: `oauth_error` with the provider's error (e.g. `invalid_grant`), `transport_failure`, `malformed_message`.
    public func exchangeCode(_ code: String, pending: PendingAuthorization) async throws -> TokenResponse {
        var parameters = FormParameters()
        parameters.append(OAuthParameter.grantType, "authorization_code")
        parameters.append(OAuthParameter.code, code)
        parameters.append(OAuthParameter.redirectURI, pending.redirectURI)
        parameters.append(OAuthParameter.codeVerifier, pending.codeVerifier)
        return try await requestTokens(parameters)
    }

    /// Trades a refresh token for new tokens — RFC 6749 §6.
    ///
    /// The provider may rotate the refresh token: keep the one in the answer when present.
    /// An ID token in the answer must keep the original `iss`, `sub` and `aud` (OIDC Core §12.2).
    ///
    /// - Parameters:
    ///   - refreshToken: refresh_token — RFC 6749 §6.
    ///   - scope: scope — RFC 6749 §6; a subset of the granted scope, or `nil` for all of it.
    public func refresh(_ refreshToken: String, scope: String? = nil) async throws -> TokenResponse {
        var parameters = FormParameters()
        parameters.append(OAuthParameter.grantType, "refresh_token")
        parameters.append(OAuthParameter.refreshToken, refreshToken)
        parameters.append(OAuthParameter.scope, scope)
        return try await requestTokens(parameters)
    }

    /// Asks the provider to revoke a token — RFC 7009 §2.1.
    ///
    /// Revoking a refresh token also ends the grant's access tokens at providers that
    /// support it (RFC 7009 §2.1). Succeeds too when the token was already invalid (§2.2).
    ///
    /// - Parameters:
    ///   - token: token — RFC 7009 §2.1, an access or refresh token.
    ///   - hint: token_type_hint — RFC 7009 §2.1: `access_token` or `refresh_token`.
    /// - Throws: `invalid_configuration` when the provider has no revocation endpoint; `oauth_error`,
    ///   of which `unsupported_token_type` is final and a 503 is worth a retry (§2.2.1).
    public func revoke(_ token: String, hint: String? = nil) async throws {
        let document = try await discover()
        let endpoint = try Self.checkedEndpoint(document.revocationEndpoint, name: "revocation_endpoint")
        var parameters = FormParameters()
        parameters.append(OAuthParameter.token, token)
        parameters.append(OAuthParameter.tokenTypeHint, hint)
        let response = try await postForm(parameters, to: endpoint)
        guard response.isSuccess else { throw Self.failure(of: response, at: "revocation endpoint") }
    }

    /// POSTs a token request and reads the answer — RFC 6749 §5.1, §5.2.
    private func requestTokens(_ parameters: FormParameters) async throws -> TokenResponse {
        let document = try await discover()
        let endpoint = try Self.checkedEndpoint(document.tokenEndpoint, name: "token_endpoint")
        let response = try await postForm(parameters, to: endpoint, proveKey: true)
        guard response.isSuccess else { throw Self.failure(of: response, at: "token endpoint") }
        guard let tokens = try? JSONDecoder().decode(TokenResponse.self, from: response.body) else {
            throw SignetError(.malformedMessage, "the token response is not a valid token response (RFC 6749 §5.1)")
        }
        // RFC 6749 §7.1: a client must not use a token whose type it does not understand (DPoP only when it proved a key).
        let understood =
            tokens.tokenType.caseInsensitiveCompare("Bearer") == .orderedSame
            || (configuration.dpopKey != nil && tokens.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame)
        guard understood else {
            throw SignetError(.malformedMessage, "the token type \(tokens.tokenType.prefix(20)) is not supported")
        }
        return tokens
    }
}
