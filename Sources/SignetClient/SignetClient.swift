// SignetClient: what an app (a public client) needs from the provider.
import Foundation
import SignetCore

/// The app SDK's entry point: discovery, authorization requests with PKCE, code exchange,
/// refresh, revocation, DPoP, and the native login (``NativeLogin``).
///
/// A value: copies share the cached discovery document and the DPoP nonces. Everything goes
/// through an ``SignetCore/HTTPTransport`` (``URLSessionTransport`` by default). For the signed-in
/// user's tokens over time, wrap it in an ``AuthState``.
public struct SignetClient: Sendable {
    /// What identifies the app to the provider.
    public struct Configuration: Sendable, Equatable {
        /// The provider's issuer URL.
        public var issuer: String
        /// The app's client_id (a public client: no secret).
        public var clientID: String
        /// The app's registered redirect URI (private-use scheme, claimed https, or loopback).
        public var redirectURI: String
        /// post_logout_redirect_uri — RP-Initiated Logout §2: where the provider sends the browser
        /// after ending its session; must be registered. `nil`: the provider shows its own page.
        public var postLogoutRedirectURI: String?

        public init(issuer: String, clientID: String, redirectURI: String, postLogoutRedirectURI: String? = nil) {
            self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
            self.clientID = clientID
            self.redirectURI = redirectURI
            self.postLogoutRedirectURI = postLogoutRedirectURI
        }
    }

    public let configuration: Configuration
    var transport: any HTTPTransport
    let now: @Sendable () -> Date
    let random: SecureRandom
    /// Set when the app proves a DPoP key (RFC 9449); `nil`: bearer tokens.
    let dpop: DPoPState?
    private let discovery = DiscoveryCache()

    /// - Parameters:
    ///   - transport: how requests travel (default `URLSession`).
    ///   - dpopKeyStore: the installation's DPoP key (RFC 9449). When set, authorization requests
    ///     carry `dpop_jkt`, token requests a proof, and tokens come back bound to the key
    ///     (`token_type` DPoP); call resources with ``send(_:accessToken:tokenType:)``. `nil`: bearer tokens.
    ///   - now: the clock, passed in so tests can pin expiry.
    ///   - random: the source of state, nonce, PKCE verifiers and proof `jti`s.
    public init(
        configuration: Configuration, transport: any HTTPTransport = URLSessionTransport(), dpopKeyStore: (any DPoPKeyStore)? = nil,
        now: @escaping @Sendable () -> Date = Date.init, random: SecureRandom = SecureRandom()
    ) {
        self.configuration = configuration
        self.transport = transport
        self.now = now
        self.random = random
        self.dpop = dpopKeyStore.map { DPoPState(store: $0, random: random) }
    }

    /// Whether this client proves a DPoP key.
    public var usesDPoP: Bool { dpop != nil }

    /// The provider's metadata (cached); its `issuer` must be the configured one exactly.
    ///
    /// Concurrent first callers share one fetch (``SignetCore/DiscoveryCache``); a failed fetch is not kept.
    public func discover() async throws -> DiscoveryDocument {
        try await discovery.document { [self] in try await fetchDiscovery() }
    }

    /// The document fetched and checked: issuer and endpoints secure, the issuer the configured one.
    private func fetchDiscovery() async throws -> DiscoveryDocument {
        try Self.requireSecure(configuration.issuer, name: "the issuer")
        let response = try await send(HTTPTransportRequest(method: "GET", url: configuration.issuer + "/.well-known/openid-configuration"))
        guard response.isSuccess, let document = try? DiscoveryDecoding.decode(response.body) else {
            throw response.isSuccess ? SignetClientError(.invalidResponse, isRetryable: false) : SignetClientError.from(response)
        }
        guard document.issuer == configuration.issuer else {
            throw SignetClientError(.responseMismatch, isRetryable: false, reason: "the discovery document names another issuer")
        }
        // Tokens go only where TLS authenticates the answer: the ID token's signature is not
        // checked because it comes straight from the token endpoint (OIDC Core §3.1.3.7 item 6).
        try Self.requireSecure(document.authorizationEndpoint, name: "authorization_endpoint")
        try Self.requireSecure(document.tokenEndpoint, name: "token_endpoint")
        for (url, name) in [
            (document.userinfoEndpoint, "userinfo_endpoint"), (document.revocationEndpoint, "revocation_endpoint"),
            (document.endSessionEndpoint, "end_session_endpoint"),
        ]
        where !url.isEmpty {
            try Self.requireSecure(url, name: name)
        }
        return document
    }

    /// A browser authorization request with secure defaults: S256 PKCE, fresh state and nonce,
    /// and `dpop_jkt` (RFC 9449 §10) when the client proves a DPoP key, so the code is bound to it.
    ///
    /// ``signIn(agent:scope:acrValues:loginHint:prompt:nonce:)`` runs the whole flow; to drive the
    /// browser yourself, open ``AppAuthorizationRequest/url`` and pass the redirect it returns to
    /// ``exchangeCode(redirect:request:)``.
    ///
    /// - Parameter nonce: nonce — OIDC Core §3.1.2.1; `nil` (the default) makes a fresh one. A
    ///   device activation passes its instance id (``DeviceEnrolment/authorizationRequest(for:scope:acrValues:loginHint:prompt:)``).
    public func makeAuthorizationRequest(
        scope: String = "openid", acrValues: String? = nil, loginHint: String? = nil, prompt: String? = nil, nonce: String? = nil
    ) async throws -> AppAuthorizationRequest {
        let document = try await discover()
        var parameters = AuthorizationParameters(
            clientID: configuration.clientID, redirectURI: configuration.redirectURI, scope: scope, acrValues: acrValues, nonce: nonce, random: random
        )
        if let dpop { parameters.dpopJKT = try await dpop.key().thumbprint }
        var query = parameters.formParameters
        query.append(OAuthParameter.loginHint, loginHint)
        query.append(OAuthParameter.prompt, prompt)
        guard let url = URL(string: query.appended(to: document.authorizationEndpoint)) else {
            throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the authorization_endpoint is not a URL")
        }
        return AppAuthorizationRequest(url: url, parameters: parameters)
    }

    /// Checks a redirect (`state`, `iss`, `error`), redeems its code with the PKCE verifier, and
    /// validates the tokens (see ``redeem(redirect:request:)``).
    public func exchangeCode(redirect: URL, request: AppAuthorizationRequest) async throws -> TokenResponse {
        try await redeem(redirect: redirect, request: request).tokens
    }

    /// Checks a redirect and redeems its code: the authorization response must carry this
    /// request's `state` (RFC 6749 §10.12) and, when present, this issuer's `iss` (RFC 9207 §2.4);
    /// an `error` is thrown as ``SignetClientError/Code/server`` with the provider's words; the
    /// token response is then checked as ``exchangeCode(_:verifier:acrValues:nonce:)`` says.
    public func redeem(redirect: URL, request: AppAuthorizationRequest) async throws -> AuthTokens {
        guard let query = URLComponents(url: redirect, resolvingAgainstBaseURL: false)?.percentEncodedQuery,
            let parameters = FormParameters(encoded: query)
        else { throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the redirect has no query") }
        guard parameters.duplicatedNames.isEmpty else {
            throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the redirect repeats a parameter")
        }
        guard let state = parameters[OAuthParameter.state], ConstantTime.equals(state, request.parameters.state) else {
            throw SignetClientError(.responseMismatch, isRetryable: false, reason: "state does not match the request's")
        }
        if let issuer = parameters[OAuthParameter.issuer] {
            guard issuer == configuration.issuer else {
                throw SignetClientError(.responseMismatch, isRetryable: false, reason: "iss is not the configured issuer (RFC 9207)")
            }
        } else if try await discover().authorizationResponseIssParameterSupported {
            // RFC 9207 §2.4: a provider that says it sends iss must have sent it.
            throw SignetClientError(.responseMismatch, isRetryable: false, reason: "the redirect has no iss though the provider sends one (RFC 9207)")
        }
        if let error = parameters[OAuthParameter.error] {
            throw SignetClientError(
                .server, serverError: OAuthError(OAuthError.Code(rawValue: error), parameters[OAuthParameter.errorDescription]), isRetryable: false)
        }
        guard let code = parameters[OAuthParameter.code] else {
            throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the redirect has no code")
        }
        guard let verifier = request.parameters.codeVerifier else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "a backend holds the PKCE verifier")
        }
        return try await redeem(code: code, verifier: verifier, parameters: request.parameters)
    }

    /// Redeems an authorization code as a public client (PKCE carries the proof).
    ///
    /// The token response is checked before it is returned: `token_type` (`DPoP` when the client
    /// proves a key, else `Bearer`), and the ID token's `iss`, `aud`, `azp`, `exp`, `iat`, `nonce`,
    /// `acr` and `at_hash` (OIDC Core §3.1.3.7; its signature stands on TLS, item 6).
    ///
    /// - Parameters:
    ///   - acrValues: the acr_values the authorization asked for; the ID token's `acr`
    ///     must satisfy them (OIDC Core §3.1.2.1), else `acr_not_satisfied`: the request URL could
    ///     have been edited to ask for less.
    ///   - nonce: the nonce the authorization request sent; the ID token must carry it.
    public func exchangeCode(_ code: String, verifier: String, acrValues: String? = nil, nonce: String? = nil) async throws -> TokenResponse {
        let parameters = AuthorizationParameters(
            clientID: configuration.clientID, redirectURI: configuration.redirectURI, scope: "", state: "", nonce: nonce, codeChallenge: "",
            acrValues: acrValues)
        return try await redeem(code: code, verifier: verifier, parameters: parameters, requiresIDToken: false).tokens
    }

    func redeem(code: String, verifier: String, parameters: AuthorizationParameters, requiresIDToken: Bool? = nil) async throws -> AuthTokens {
        var form = FormParameters()
        form.append(OAuthParameter.grantType, "authorization_code")
        form.append(OAuthParameter.code, code)
        form.append(OAuthParameter.redirectURI, configuration.redirectURI)
        form.append(OAuthParameter.codeVerifier, verifier)
        form.append(OAuthParameter.clientID, configuration.clientID)
        let tokens = try await tokenRequest(form)
        let openid = parameters.scope.split(separator: " ").contains("openid")
        return try check.check(
            tokens, .init(nonce: parameters.nonce, acrValues: parameters.acrValues, requiresIDToken: requiresIDToken ?? openid, previous: nil),
            now: now())
    }

    /// Refreshes (RFC 6749 §6) with a DPoP proof when the client proves a key; the answer carries
    /// a new, rotated refresh token. Its token type is checked, and so is its ID token if it has one.
    public func refresh(_ refreshToken: String) async throws -> TokenResponse {
        try await refresh(refreshToken, previous: nil).tokens
    }

    func refresh(_ refreshToken: String, previous: IDTokenClaims?) async throws -> AuthTokens {
        var form = FormParameters()
        form.append(OAuthParameter.grantType, "refresh_token")
        form.append(OAuthParameter.refreshToken, refreshToken)
        form.append(OAuthParameter.clientID, configuration.clientID)
        let tokens = try await tokenRequest(form)
        return try check.check(tokens, .init(nonce: nil, acrValues: nil, requiresIDToken: false, previous: previous), now: now())
    }

    /// Starts a native login (the provider's login as an API), see ``NativeLogin``.
    public func nativeLogin() -> NativeLogin { NativeLogin(client: self) }

    // MARK: plumbing

    var check: TokenResponseCheck { TokenResponseCheck(issuer: configuration.issuer, clientID: configuration.clientID, usedDPoP: dpop != nil) }

    /// POSTs to the token endpoint, with a DPoP proof when the client has a key (``postForm(_:to:)``).
    func tokenRequest(_ form: FormParameters) async throws -> TokenResponse {
        let response = try await postForm(form, to: try await discover().tokenEndpoint)
        guard response.isSuccess else { throw SignetClientError.from(response) }
        guard let tokens = try? JSONDecoder().decode(TokenResponse.self, from: response.body) else {
            throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the token response is not the JSON of RFC 6749 section 5.1")
        }
        return tokens
    }

    /// POSTs `form` to one of the provider's endpoints, with a DPoP proof for it when the client
    /// has a key, retrying once when the provider asks for its nonce (RFC 9449 §8).
    func postForm(_ form: FormParameters, to endpoint: String) async throws -> HTTPTransportResponse {
        let request = HTTPTransportRequest(
            method: "POST", url: endpoint, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Data(form.encoded.utf8))
        guard let dpop else { return try await send(request) }
        return try await send(request, via: dpop.transport(over: transport, now: now))
    }

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        try await send(request, via: transport)
    }

    /// Sends through `transport`, its failures as ``SignetClientError``.
    func send(_ request: HTTPTransportRequest, via transport: any HTTPTransport) async throws -> HTTPTransportResponse {
        do { return try await transport.send(request) } catch { throw SignetClientError.wrap(error) }
    }
}

extension SignetClient {
    /// Throws `invalid_configuration` unless `url` is https (or http on loopback): ``SignetCore/SecureEndpoint``.
    static func requireSecure(_ url: String, name: String) throws {
        do { try SecureEndpoint.check(url, name: name) } catch let error as SignetError {
            throw SignetClientError(.misuse, isRetryable: false, reason: error.reason, underlying: error)
        }
    }
}
