// SignetClient: what an app (a public client) needs from the provider.
import Foundation
import SignetCore

/// The app SDK's entry point: discovery, authorization requests with PKCE, code exchange,
/// refresh, and the native login (``NativeLogin``).
///
/// A value: copies share the cached discovery document. Everything goes through an
/// ``SignetCore/HTTPTransport`` (``URLSessionTransport`` by default).
public struct SignetClient: Sendable {
    /// What identifies the app to the provider.
    public struct Configuration: Sendable, Equatable {
        /// The provider's issuer URL.
        public var issuer: String
        /// The app's client_id (a public client: no secret).
        public var clientID: String
        /// The app's registered redirect URI (private-use scheme, claimed https, or loopback).
        public var redirectURI: String

        public init(issuer: String, clientID: String, redirectURI: String) {
            self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
            self.clientID = clientID
            self.redirectURI = redirectURI
        }
    }

    public let configuration: Configuration
    let transport: any HTTPTransport
    let now: @Sendable () -> Date
    private let discovery = DiscoveryHolder()

    public init(configuration: Configuration, transport: any HTTPTransport = URLSessionTransport(), now: @escaping @Sendable () -> Date = Date.init) {
        self.configuration = configuration
        self.transport = transport
        self.now = now
    }

    /// The provider's metadata (cached); its `issuer` must be the configured one exactly.
    public func discover() async throws -> DiscoveryDocument {
        if let cached = await discovery.document { return cached }
        let response = try await send(HTTPTransportRequest(method: "GET", url: configuration.issuer + "/.well-known/openid-configuration"))
        guard response.isSuccess, let document = try? JSONDecoder().decode(DiscoveryDocument.self, from: response.body) else {
            throw response.isSuccess ? SignetClientError(.invalidResponse, isRetryable: false) : SignetClientError.from(response)
        }
        guard document.issuer == configuration.issuer else { throw SignetClientError(.responseMismatch, isRetryable: false) }
        await discovery.store(document)
        return document
    }

    /// A browser authorization request with secure defaults: S256 PKCE, fresh state and nonce.
    ///
    /// Open ``AuthorizationRequest/url`` in `ASWebAuthenticationSession` (or a Custom Tab) and pass
    /// the redirect it returns to ``exchangeCode(redirect:request:)``.
    public func makeAuthorizationRequest(scope: String = "openid", acrValues: String? = nil, loginHint: String? = nil, prompt: String? = nil) async throws -> AuthorizationRequest {
        let document = try await discover()
        let parameters = AuthorizationParameters(clientID: configuration.clientID, redirectURI: configuration.redirectURI, scope: scope, acrValues: acrValues)
        var query = parameters.formParameters
        query.append(OAuthParameter.loginHint, loginHint)
        query.append(OAuthParameter.prompt, prompt)
        guard let url = URL(string: document.authorizationEndpoint + "?" + query.encoded) else {
            throw SignetClientError(.invalidResponse, isRetryable: false)
        }
        return AuthorizationRequest(url: url, parameters: parameters)
    }

    /// Checks a redirect (`state`, `iss`, `error`) and redeems its code with the PKCE verifier.
    public func exchangeCode(redirect: URL, request: AuthorizationRequest) async throws -> TokenResponse {
        guard let query = URLComponents(url: redirect, resolvingAgainstBaseURL: false)?.percentEncodedQuery,
            let parameters = FormParameters(encoded: query)
        else { throw SignetClientError(.invalidResponse, isRetryable: false) }
        guard let state = parameters[OAuthParameter.state], ConstantTime.equals(state, request.parameters.state) else {
            throw SignetClientError(.responseMismatch, isRetryable: false)
        }
        if let issuer = parameters[OAuthParameter.issuer], issuer != configuration.issuer {
            throw SignetClientError(.responseMismatch, isRetryable: false)
        }
        if let error = parameters[OAuthParameter.error] {
            throw SignetClientError(.server, serverError: OAuthError(OAuthError.Code(rawValue: error), parameters[OAuthParameter.errorDescription]), isRetryable: false)
        }
        guard let code = parameters[OAuthParameter.code] else { throw SignetClientError(.invalidResponse, isRetryable: false) }
        return try await exchangeCode(code, verifier: request.parameters.codeVerifier ?? "", acrValues: request.parameters.acrValues)
    }

    /// Redeems an authorization code as a public client (PKCE carries the proof).
    ///
    /// - Parameter acrValues: the acr_values the authorization asked for; the ID token's `acr`
    ///   must satisfy them (OIDC Core §3.1.2.1), else `acr_not_satisfied`: the request URL could
    ///   have been edited to ask for less.
    public func exchangeCode(_ code: String, verifier: String, acrValues: String? = nil) async throws -> TokenResponse {
        var form = FormParameters()
        form.append(OAuthParameter.grantType, "authorization_code")
        form.append(OAuthParameter.code, code)
        form.append(OAuthParameter.redirectURI, configuration.redirectURI)
        form.append(OAuthParameter.codeVerifier, verifier)
        form.append(OAuthParameter.clientID, configuration.clientID)
        let tokens = try await tokenRequest(form)
        let requested = (acrValues ?? "").split(separator: " ").map(String.init)
        if !requested.isEmpty {
            // Straight from the token endpoint over TLS, so its claims may be read unverified (OIDC Core §3.1.3.7 item 6).
            let acr = tokens.idToken.flatMap(IDTokenClaims.unverified)?.acr
            guard AssuranceLevel.satisfies(acr: acr, requested: requested) else { throw SignetClientError(.acrNotSatisfied, isRetryable: false) }
        }
        return tokens
    }

    /// Refreshes (RFC 6749 §6); the answer carries a new, rotated refresh token.
    public func refresh(_ refreshToken: String) async throws -> TokenResponse {
        var form = FormParameters()
        form.append(OAuthParameter.grantType, "refresh_token")
        form.append(OAuthParameter.refreshToken, refreshToken)
        form.append(OAuthParameter.clientID, configuration.clientID)
        return try await tokenRequest(form)
    }

    /// Starts a native login (the provider's login as an API), see ``NativeLogin``.
    public func nativeLogin() -> NativeLogin { NativeLogin(client: self) }

    // MARK: plumbing

    func tokenRequest(_ form: FormParameters) async throws -> TokenResponse {
        let document = try await discover()
        let response = try await send(
            HTTPTransportRequest(
                method: "POST", url: document.tokenEndpoint, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                body: Data(form.encoded.utf8)))
        guard response.isSuccess else { throw SignetClientError.from(response) }
        guard let tokens = try? JSONDecoder().decode(TokenResponse.self, from: response.body) else {
            throw SignetClientError(.invalidResponse, isRetryable: false)
        }
        return tokens
    }

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        do { return try await transport.send(request) } catch { throw SignetClientError.wrap(error) }
    }
}

/// The cached discovery document, shared by copies of a client.
actor DiscoveryHolder {
    private(set) var document: DiscoveryDocument?
    func store(_ document: DiscoveryDocument) { self.document = document }
}
