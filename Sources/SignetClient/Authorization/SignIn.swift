// The browser sign-in from start to tokens — OIDC Core §3.1, RFC 8252.
import Foundation
import SignetCore

extension SignetClient {
    /// Signs in through the browser: makes the authorization request (PKCE S256, state, nonce,
    /// `dpop_jkt` with a DPoP key), shows it in `agent`, checks the redirect, redeems the code and
    /// validates the tokens.
    ///
    /// The ID token is checked with the same code the relying-party kit uses: `iss`, `aud`, `azp`,
    /// `exp`, `iat`, `nonce`, `acr` against `acrValues`, and `at_hash`. Its signature is not
    /// checked: it came straight from the token endpoint over TLS (OIDC Core §3.1.3.7 item 6).
    ///
    /// - Parameters:
    ///   - agent: the browser (``WebAuthenticationSessionAgent`` on Apple platforms).
    ///   - scope: scope — RFC 6749 §3.3; must include `openid`.
    ///   - acrValues: acr_values — OIDC Core §3.1.2.1, space-separated.
    ///   - loginHint: login_hint — OIDC Core §3.1.2.1.
    ///   - prompt: prompt — OIDC Core §3.1.2.1 (`login` forces a new login).
    ///   - nonce: nonce — OIDC Core §3.1.2.1; `nil` makes a fresh one (a device activation passes its instance id).
    /// - Throws: ``SignetClientError``: `cancelled` when the user closed the browser;
    ///   `response_mismatch` for a foreign `state` or `iss`; `server` for an error redirect or a
    ///   refused code; `invalid_id_token` (with ``SignetClientError/idTokenFailures``),
    ///   `acr_not_satisfied`, `unexpected_token_type` when the tokens fail their checks.
    public func signIn(
        agent: any ExternalUserAgent, scope: String = "openid", acrValues: String? = nil, loginHint: String? = nil, prompt: String? = nil,
        nonce: String? = nil
    ) async throws -> AuthTokens {
        guard scope.split(separator: " ").contains("openid") else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "scope must include openid")
        }
        guard let redirectURI = URL(string: configuration.redirectURI) else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "the configured redirect URI is not a URL")
        }
        let request = try await makeAuthorizationRequest(scope: scope, acrValues: acrValues, loginHint: loginHint, prompt: prompt, nonce: nonce)
        let redirect: URL
        do {
            redirect = try await agent.present(request.url, redirectURI: redirectURI)
        } catch let error as SignetClientError {
            throw error
        } catch is CancellationError {
            throw SignetClientError(.cancelled, isRetryable: false)
        } catch {
            throw SignetClientError(.userAgent, isRetryable: true, underlying: error)
        }
        return try await redeem(redirect: redirect, request: request)
    }
}
