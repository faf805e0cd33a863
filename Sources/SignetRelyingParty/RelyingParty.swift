// RelyingParty: the kit a service's backend uses against an OpenID provider.
import Foundation
import SignetCore

/// A service's backend acting as an OpenID Connect relying party (OAuth confidential or public client).
///
/// Runs the authorization code flow with secure defaults — `state`, `nonce` and PKCE S256
/// on every request, the `iss` response parameter checked (RFC 9207), ID tokens validated
/// as OIDC Core §3.1.3.7 asks — and the calls around it: refresh, revocation, UserInfo and
/// RP-initiated logout. The backend keeps the ``PendingAuthorization`` (including the PKCE
/// verifier) between sending the browser away and receiving it back.
///
/// A value: copies share the discovery document and key set, which live in actors.
/// Time and randomness are passed in, so tests can pin expiry and nonces.
public struct RelyingParty: Sendable {
    /// The relying party's settings.
    public let configuration: RelyingPartyConfiguration
    /// How requests reach the provider.
    public let transport: any HTTPTransport
    /// The provider's signing keys, fetched from `jwks_uri` when first needed.
    public let keySet: JWKSCache
    let now: @Sendable () -> Date
    let random: SecureRandom
    private let discoveryCache: DiscoveryCache
    /// The servers' latest DPoP nonces (RFC 9449 §8, §9), sent in later proofs.
    let dpopNonces = DPoPNonces()

    /// A relying party for `configuration` that talks to the provider through `transport`.
    ///
    /// Nothing is fetched until first needed.
    ///
    /// - Parameters:
    ///   - configuration: the issuer, client id and client authentication.
    ///   - transport: the HTTP transport; default ``AsyncHTTPClientTransport`` over the shared client.
    ///   - now: the clock used for token expiry and client assertions.
    ///   - random: the source of `state`, `nonce`, PKCE verifiers and assertion `jti`s.
    public init(
        configuration: RelyingPartyConfiguration,
        transport: any HTTPTransport = AsyncHTTPClientTransport(),
        now: @escaping @Sendable () -> Date = Date.init,
        random: SecureRandom = SecureRandom()
    ) {
        self.configuration = configuration
        self.transport = transport
        self.now = now
        self.random = random
        let discoveryCache = DiscoveryCache()
        self.discoveryCache = discoveryCache
        self.keySet = JWKSCache.discovered(
            issuer: configuration.issuer, discovery: discoveryCache, transport: transport,
            minimumRefetchInterval: configuration.keySetRefetchInterval,
            maximumAge: configuration.keySetMaximumAge, now: now)
    }

    /// The provider's metadata, fetched once from `{issuer}/.well-known/openid-configuration`.
    ///
    /// The document's `issuer` must equal the configured issuer exactly (OIDC Discovery §4.3),
    /// otherwise a provider could claim another's identity and this throws `issuer_mismatch`.
    /// The document is cached for the life of this value and its copies; a failed fetch is not.
    public func discover() async throws -> DiscoveryDocument {
        try await discoveryCache.document { [configuration, transport] in
            try await Self.fetchDiscovery(issuer: configuration.issuer, transport: transport)
        }
    }

    static func fetchDiscovery(issuer configured: String, transport: any HTTPTransport) async throws -> DiscoveryDocument {
        let issuer = try checkedEndpoint(configured, name: "issuer")
        // OIDC Discovery §4.1: remove a terminating "/" before appending the well-known path.
        let base = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        let request = HTTPTransportRequest(
            method: "GET", url: base + "/.well-known/openid-configuration", headers: [("Accept", "application/json")])
        let response = try await send(request, through: transport)
        guard response.isSuccess else {
            throw SignetError(
                response.status >= 500 ? .transportFailure : .malformedMessage,
                "the discovery document could not be fetched (HTTP \(response.status))")
        }
        let document = try DiscoveryDecoding.decode(response.body)
        guard document.issuer == configured else {
            throw SignetError(.issuerMismatch, "the discovery document names a different issuer")
        }
        return document
    }

    /// The same relying party (configuration, clock and source of randomness) talking to the
    /// provider through `transport` instead; its discovery and key caches start empty.
    public func using(_ transport: any HTTPTransport) -> RelyingParty {
        RelyingParty(configuration: configuration, transport: transport, now: now, random: random)
    }

    /// The time now, in whole seconds since 1970, as JWT claims count it.
    var nowSeconds: Int { Int(now().timeIntervalSince1970.rounded(.down)) }
}

// MARK: - HTTP plumbing shared by the endpoints

extension RelyingParty {
    /// Sends `request`, turning any error a custom transport throws into `transport_failure`.
    static func send(_ request: HTTPTransportRequest, through transport: any HTTPTransport) async throws -> HTTPTransportResponse {
        do {
            return try await transport.send(request)
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.transportFailure, "\(request.method) failed: \(String(describing: type(of: error)).prefix(80))")
        }
    }

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        try await Self.send(request, through: transport)
    }

    /// `url` when it may carry tokens: `https`, or `http` to a loopback host for development.
    ///
    /// OIDC Discovery §3 and RFC 6749 §3.2 require TLS; an empty endpoint means the provider does not offer it.
    static func checkedEndpoint(_ url: String, name: String) throws -> String {
        try SecureEndpoint.check(url, name: name)
    }

    /// `endpoint` with `parameters` added to its query — RFC 6749 §3.1: the endpoint's own query is kept.
    ///
    /// Encoded with ``SignetCore/FormParameters/encode(_:)`` rather than `URLQueryItem`,
    /// which leaves `+` as is, and servers read `+` as a space.
    static func url(_ endpoint: String, adding parameters: FormParameters, name: String) throws -> URL {
        guard URLComponents(string: endpoint) != nil else {
            throw SignetError(.invalidConfiguration, "\(name) is not a URL")
        }
        guard let url = URL(string: parameters.appended(to: endpoint)) else {
            throw SignetError(.invalidConfiguration, "a URL could not be built from \(name)")
        }
        return url
    }

    /// The error for a non-2xx answer: the provider's OAuth error when it sent one (RFC 6749 §5.2).
    ///
    /// An answer without one is `transport_failure` for 5xx (worth a retry) and `malformed_message` otherwise.
    static func failure(of response: HTTPTransportResponse, at endpoint: String) -> SignetError {
        if let oauthError = try? JSONDecoder().decode(OAuthError.self, from: response.body) {
            return SignetError(.oauth, "the \(endpoint) refused the request (HTTP \(response.status))", oauthError: oauthError)
        }
        return SignetError(
            response.status >= 500 ? .transportFailure : .malformedMessage,
            "the \(endpoint) answered HTTP \(response.status) without an OAuth error")
    }
}
