// The authorization request and what the backend keeps until the redirect returns (RFC 6749 §4.1, OIDC Core §3.1.2).
import Foundation
import SignetCore

/// An authorization request ready to send the browser to, and the secrets to keep for its answer.
///
/// Send the user agent to ``url``; store ``pending`` server-side (for example in the
/// session, keyed by a cookie) until the redirect comes back. It is `Codable` so it can be
/// stored anywhere; it holds secrets, so store it where only the backend can read it.
public struct AuthorizationRequest: Sendable, Codable, Equatable {
    /// The authorization endpoint with every request parameter in its query — RFC 6749 §4.1.1.
    public var url: URL
    /// What the backend keeps to check the response and redeem the code.
    public var pending: PendingAuthorization

    /// A request for `url` whose answer is checked against `pending`.
    public init(url: URL, pending: PendingAuthorization) {
        self.url = url
        self.pending = pending
    }
}

/// The per-request secrets a backend keeps between the authorization request and its response.
///
/// The backend, not the browser, holds the PKCE verifier: a stolen code is useless
/// without it (RFC 7636 §1). Prints with its secrets as `****`.
public struct PendingAuthorization: Sendable, Codable, Equatable, CustomStringConvertible, CustomReflectable {
    /// state — RFC 6749 §4.1.1; binds the response to this request (RFC 6749 §10.12).
    public var state: String
    /// nonce — OIDC Core §3.1.2.1; binds the ID token to this request (OIDC Core §15.5.2).
    public var nonce: String
    /// code_verifier — RFC 7636 §4.1; sent with the code at the token endpoint.
    public var codeVerifier: String
    /// redirect_uri — RFC 6749 §4.1.3; sent again with the code, exactly as in the request.
    public var redirectURI: String
    /// max_age — OIDC Core §3.1.2.1, in seconds, when one was sent; `auth_time` is then checked.
    public var maxAge: Int?
    /// acr_values — OIDC Core §3.1.2.1, when some were asked for; the ID token's `acr` must
    /// satisfy them, since an attacker can edit or drop them from the request URL.
    public var acrValues: [String]?
    /// Whether the response must carry `iss` — RFC 9207 §2.4.
    ///
    /// Set when the provider's metadata says `authorization_response_iss_parameter_supported`,
    /// so a response without `iss` can only come from somewhere else.
    public var requiresIssuerParameter: Bool

    /// Pending state with the given values; ``RelyingParty/makeAuthorizationRequest(redirectURI:scope:extraParameters:loginHint:prompt:maxAge:acrValues:uiLocales:signed:)`` makes fresh ones.
    public init(
        state: String, nonce: String, codeVerifier: String, redirectURI: String, maxAge: Int? = nil, acrValues: [String]? = nil,
        requiresIssuerParameter: Bool = false
    ) {
        self.acrValues = acrValues
        self.state = state
        self.nonce = nonce
        self.codeVerifier = codeVerifier
        self.redirectURI = redirectURI
        self.maxAge = maxAge
        self.requiresIssuerParameter = requiresIssuerParameter
    }

    /// The redirect URI, max_age and acr_values only; state, nonce and verifier print as `****`.
    public var description: String {
        "PendingAuthorization(redirectURI: \(redirectURI), maxAge: \(maxAge.map(String.init) ?? "nil"), acrValues: \(acrValues?.joined(separator: " ") ?? "nil"), state: ****, nonce: ****, codeVerifier: ****)"
    }

    /// Reflection shows only what ``description`` shows.
    public var customMirror: Mirror {
        Mirror(self, children: ["redirectURI": redirectURI, "maxAge": maxAge as Any, "acrValues": acrValues as Any], displayStyle: .struct)
    }
}

extension RelyingParty {
    /// The parameters ``makeAuthorizationRequest(redirectURI:scope:extraParameters:loginHint:prompt:maxAge:acrValues:uiLocales:signed:)`` sets itself, which extra parameters may not set.
    ///
    /// Besides the security parameters, `request` and `request_uri` are refused because a
    /// request object could override them (OIDC Core §6.1), and `response_mode` because this
    /// kit reads the response from the redirect's query.
    public static let reservedAuthorizationParameters: Set<String> = [
        OAuthParameter.responseType, OAuthParameter.clientID, OAuthParameter.redirectURI, OAuthParameter.scope,
        OAuthParameter.state, OAuthParameter.nonce, OAuthParameter.codeChallenge, OAuthParameter.codeChallengeMethod,
        OAuthParameter.codeVerifier, OAuthParameter.loginHint, OAuthParameter.prompt, OAuthParameter.maxAge,
        OAuthParameter.acrValues, OAuthParameter.uiLocales, OAuthParameter.request, OAuthParameter.requestURI,
        OAuthParameter.responseMode,
    ]

    /// A fresh authorization code request with secure defaults — OIDC Core §3.1.2.1.
    ///
    /// Always `response_type=code`, a fresh 256-bit `state` and `nonce`, and a fresh PKCE
    /// verifier with its S256 challenge (RFC 7636 §4.2), so a leaked or injected code cannot
    /// be redeemed by anyone else. Extra parameters may add to the request but never replace
    /// one of ``reservedAuthorizationParameters``.
    ///
    /// - Parameters:
    ///   - redirectURI: redirect_uri — RFC 6749 §3.1.2; an absolute URI registered for this client.
    ///   - scope: scope — RFC 6749 §3.3, space-separated; default `openid`.
    ///   - extraParameters: further request parameters, e.g. `display` or `claims`.
    ///   - loginHint: login_hint — OIDC Core §3.1.2.1.
    ///   - prompt: prompt — OIDC Core §3.1.2.1, space-separated (`none`, `login`, `consent`, `select_account`).
    ///   - maxAge: max_age — OIDC Core §3.1.2.1, seconds; the ID token's `auth_time` is then checked.
    ///   - acrValues: acr_values — OIDC Core §3.1.2.1, space-separated.
    ///   - uiLocales: ui_locales — OIDC Core §3.1.2.1, space-separated BCP 47 tags.
    ///   - signed: send the parameters as a request object signed with the client's private_key_jwt
    ///     key (RFC 9101), so only what the backend signed counts.
    /// - Throws: `invalid_configuration` for a bad redirect URI, negative max_age or a reserved extra parameter;
    ///   discovery errors when the provider's metadata cannot be fetched.
    public func makeAuthorizationRequest(
        redirectURI: String,
        scope: String = "openid",
        extraParameters: [String: String] = [:],
        loginHint: String? = nil,
        prompt: String? = nil,
        maxAge: Int? = nil,
        acrValues: String? = nil,
        uiLocales: String? = nil,
        signed: Bool = false
    ) async throws -> AuthorizationRequest {
        let prepared = try await prepareAuthorization(
            redirectURI: redirectURI, scope: scope, extraParameters: extraParameters, loginHint: loginHint, prompt: prompt, maxAge: maxAge,
            acrValues: acrValues, uiLocales: uiLocales)
        let parameters = signed ? try await signedParameters(prepared.parameters) : prepared.parameters
        let url = try Self.url(prepared.endpoint, adding: parameters, name: "authorization_endpoint")
        return AuthorizationRequest(url: url, pending: prepared.pending)
    }

    /// `client_id` and the parameters as a signed request object (`request`, RFC 9101 §5.1): only
    /// what the object says counts, so nobody on the way can change the request.
    func signedParameters(_ parameters: FormParameters) async throws -> FormParameters {
        var signed = FormParameters()
        signed.append(OAuthParameter.clientID, configuration.clientID)
        signed.append(OAuthParameter.request, try await makeRequestObject(parameters))
        return signed
    }

    /// The same request as ``makeAuthorizationRequest(redirectURI:scope:extraParameters:loginHint:prompt:maxAge:acrValues:uiLocales:signed:)``,
    /// pushed to the provider over the back channel first — RFC 9126.
    ///
    /// The parameters go to the `pushed_authorization_request_endpoint` with this client's
    /// authentication; the URL handed to the app carries only `client_id` and the single-use
    /// `request_uri` (valid about a minute), so nobody on the way can read or change the request.
    /// This is the pattern Singpass's FAPI 2.0 profile requires.
    ///
    /// - Throws: `invalid_configuration` when the provider offers no PAR endpoint, and what
    ///   ``makeAuthorizationRequest(redirectURI:scope:extraParameters:loginHint:prompt:maxAge:acrValues:uiLocales:signed:)``
    ///   throws; `oauth_error` with the provider's error when it refuses the request.
    public func pushAuthorizationRequest(
        redirectURI: String,
        scope: String = "openid",
        extraParameters: [String: String] = [:],
        loginHint: String? = nil,
        prompt: String? = nil,
        maxAge: Int? = nil,
        acrValues: String? = nil,
        uiLocales: String? = nil,
        signed: Bool = false
    ) async throws -> AuthorizationRequest {
        let prepared = try await prepareAuthorization(
            redirectURI: redirectURI, scope: scope, extraParameters: extraParameters, loginHint: loginHint, prompt: prompt, maxAge: maxAge,
            acrValues: acrValues, uiLocales: uiLocales)
        guard let parEndpoint = prepared.document.pushedAuthorizationRequestEndpoint else {
            throw SignetError(.invalidConfiguration, "the provider has no pushed_authorization_request_endpoint")
        }
        let endpoint = try Self.checkedEndpoint(parEndpoint, name: "pushed_authorization_request_endpoint")
        // Client authentication adds client_id itself.
        let parameters = signed ? try await signedParameters(prepared.parameters) : prepared.parameters
        let pushed = FormParameters(parameters.pairs.filter { $0.name != OAuthParameter.clientID })
        let response = try await postForm(pushed, to: endpoint, proveKey: true)
        guard response.status == 201 || response.status == 200 else { throw Self.failure(of: response, at: "pushed authorization request endpoint") }
        guard let answer = try? JSONDecoder().decode(PushedRequestAnswer.self, from: response.body),
            answer.requestURI.hasPrefix("urn:ietf:params:oauth:request_uri:")
        else { throw SignetError(.malformedMessage, "the PAR response has no valid request_uri (RFC 9126 §2.2)") }
        var reference = FormParameters()
        reference.append(OAuthParameter.clientID, configuration.clientID)
        reference.append(OAuthParameter.requestURI, answer.requestURI)
        let url = try Self.url(prepared.endpoint, adding: reference, name: "authorization_endpoint")
        return AuthorizationRequest(url: url, pending: prepared.pending)
    }

    /// request_uri and expires_in — RFC 9126 §2.2.
    struct PushedRequestAnswer: Decodable {
        let requestURI: String
        let expiresIn: Int?
        enum CodingKeys: String, CodingKey {
            case requestURI = "request_uri"
            case expiresIn = "expires_in"
        }
    }

    /// What both request builders share: checked inputs, fresh pending secrets, and the parameters.
    private func prepareAuthorization(
        redirectURI: String, scope: String, extraParameters: [String: String], loginHint: String?, prompt: String?, maxAge: Int?,
        acrValues: String?, uiLocales: String?
    ) async throws -> (pending: PendingAuthorization, parameters: FormParameters, document: DiscoveryDocument, endpoint: String) {
        if let reserved = extraParameters.keys.filter(Self.reservedAuthorizationParameters.contains).sorted().first {
            throw SignetError(.invalidConfiguration, "extra parameter \(reserved) would override one the kit sets")
        }
        if extraParameters.keys.contains(where: \.isEmpty) {
            throw SignetError(.invalidConfiguration, "an extra parameter has an empty name")
        }
        guard let redirect = URLComponents(string: redirectURI), redirect.scheme != nil, redirect.fragment == nil else {
            throw SignetError(.invalidConfiguration, "redirect_uri must be an absolute URI without a fragment (RFC 6749 §3.1.2)")
        }
        if let maxAge, maxAge < 0 { throw SignetError(.invalidConfiguration, "max_age must not be negative") }

        let document = try await discover()
        let endpoint = try Self.checkedEndpoint(document.authorizationEndpoint, name: "authorization_endpoint")
        let pending = PendingAuthorization(
            state: random.token(),
            nonce: random.token(),
            codeVerifier: PKCE.makeVerifier(random: random),
            redirectURI: redirectURI,
            maxAge: maxAge,
            acrValues: acrValues.map { $0.split(separator: " ").map(String.init) }.flatMap { $0.isEmpty ? nil : $0 },
            requiresIssuerParameter: document.authorizationResponseIssParameterSupported
        )

        var parameters = FormParameters()
        parameters.append(OAuthParameter.responseType, "code")
        parameters.append(OAuthParameter.clientID, configuration.clientID)
        parameters.append(OAuthParameter.redirectURI, redirectURI)
        parameters.append(OAuthParameter.scope, scope)
        parameters.append(OAuthParameter.state, pending.state)
        parameters.append(OAuthParameter.nonce, pending.nonce)
        parameters.append(OAuthParameter.codeChallenge, PKCE.challenge(for: pending.codeVerifier))
        parameters.append(OAuthParameter.codeChallengeMethod, PKCE.method)
        parameters.append(OAuthParameter.loginHint, loginHint)
        parameters.append(OAuthParameter.prompt, prompt)
        parameters.append(OAuthParameter.maxAge, maxAge.map(String.init))
        parameters.append(OAuthParameter.acrValues, acrValues)
        parameters.append(OAuthParameter.uiLocales, uiLocales)
        for name in extraParameters.keys.sorted() { parameters.append(name, extraParameters[name]) }
        return (pending, parameters, document, endpoint)
    }

    /// The authorization code from the redirect back to `redirect_uri`, once the response is checked.
    ///
    /// Checks, in order: parameters are not repeated (RFC 6749 §3.1); `state` equals the one
    /// sent, compared in constant time (RFC 6749 §10.12); `iss`, when present or when the
    /// provider promised it, equals the issuer (RFC 9207 §2.4); then an `error` response is
    /// surfaced. Errors are checked after state and iss so a forged error cannot be told apart
    /// from a forged success.
    ///
    /// - Parameters:
    ///   - url: the full URL the user agent was redirected to.
    ///   - pending: what ``makeAuthorizationRequest(redirectURI:scope:extraParameters:loginHint:prompt:maxAge:acrValues:uiLocales:signed:)`` returned for this request.
    /// - Returns: code — RFC 6749 §4.1.2.
    /// - Throws: `state_mismatch`, `issuer_mismatch`, `oauth_error` carrying the provider's
    ///   ``SignetCore/OAuthError`` (RFC 6749 §4.1.2.1), or `malformed_message`.
    public func handleRedirect(_ url: URL, pending: PendingAuthorization) throws -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let parameters = FormParameters(encoded: components.percentEncodedQuery ?? "")
        else { throw SignetError(.malformedMessage, "the redirect's query is not well formed") }
        if let repeated = parameters.duplicatedNames.first {
            throw SignetError(.malformedMessage, "the redirect repeats the parameter \(repeated)")
        }
        guard let state = parameters[OAuthParameter.state], ConstantTime.equals(state, pending.state) else {
            throw SignetError(.stateMismatch, "the redirect's state is not the one sent")
        }
        if let issuer = parameters[OAuthParameter.issuer] {
            guard issuer == configuration.issuer else {
                throw SignetError(.issuerMismatch, "the redirect's iss is not the configured issuer")
            }
        } else if pending.requiresIssuerParameter {
            throw SignetError(.issuerMismatch, "the redirect has no iss although the provider sends one (RFC 9207)")
        }
        if let error = parameters[OAuthParameter.error] {
            let oauthError = OAuthError(OAuthError.Code(rawValue: error), parameters[OAuthParameter.errorDescription])
            throw SignetError(.oauth, "the provider answered the authorization request with an error", oauthError: oauthError)
        }
        guard let code = parameters[OAuthParameter.code], !code.isEmpty else {
            throw SignetError(.malformedMessage, "the redirect has neither code nor error")
        }
        return code
    }
}
