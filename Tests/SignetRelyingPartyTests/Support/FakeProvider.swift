// An OpenID provider scripted in memory: discovery, a JWKS from a key it holds, a token endpoint that answers what the test says.
import Crypto
import Foundation
import JWTKit
import SignetCore
import SignetJOSE
import SignetRelyingParty
import SignetTesting

/// A scripted provider behind the ``HTTPTransport`` protocol; records every request.
actor FakeProvider: HTTPTransport {
    static let issuer = "https://id.example.com"
    static let clientID = "service-backend"

    /// The key ID tokens are signed with, published as `key-1`.
    let signingKey = P256.Signing.PrivateKey()
    /// The keys served at jwks_uri.
    var publishedKeys: [PublicJWK]
    /// The issuer the discovery document names.
    var discoveryIssuer = FakeProvider.issuer
    /// Whether discovery says `authorization_response_iss_parameter_supported`.
    var issParameterSupported = true
    /// When set, discovery serves only the members OIDC Discovery requires.
    var minimalDiscovery = false
    /// The answer of the token and revocation endpoints; default an error so tests set it.
    var tokenAnswer = HTTPTransportResponse(status: 400, body: Data(#"{"error":"invalid_request"}"#.utf8))
    var revocationAnswer = HTTPTransportResponse(status: 200)
    var userInfoAnswer = HTTPTransportResponse(status: 200, body: Data(#"{"sub":"user-1","email":"a@example.com"}"#.utf8))
    private(set) var requests: [HTTPTransportRequest] = []

    init() {
        publishedKeys = []
        publishedKeys = [PublicJWK(p256: signingKey.publicKey, kid: "key-1")]
    }

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        requests.append(request)
        guard let path = URLComponents(string: request.url)?.path else { return HTTPTransportResponse(status: 400) }
        switch path {
        case "/.well-known/openid-configuration": return json(discoveryDocument())
        case "/jwks": return HTTPTransportResponse(status: 200, body: try JSONEncoder().encode(PublicJWKS(keys: publishedKeys)))
        case "/token": return tokenAnswer
        case "/revoke": return revocationAnswer
        case "/userinfo": return userInfoAnswer
        default: return HTTPTransportResponse(status: 404)
        }
    }

    // MARK: Scripting

    func setTokenAnswer(_ answer: HTTPTransportResponse) { tokenAnswer = answer }
    func setRevocationAnswer(_ answer: HTTPTransportResponse) { revocationAnswer = answer }
    func setUserInfoAnswer(_ answer: HTTPTransportResponse) { userInfoAnswer = answer }
    func setDiscoveryIssuer(_ issuer: String) { discoveryIssuer = issuer }
    func setIssParameterSupported(_ supported: Bool) { issParameterSupported = supported }
    func setMinimalDiscovery(_ minimal: Bool) { minimalDiscovery = minimal }
    func publish(_ keys: [PublicJWK]) { publishedKeys = keys }

    /// Answers the token endpoint with `tokens`.
    func answerTokens(_ tokens: TokenResponse) throws {
        tokenAnswer = HTTPTransportResponse(status: 200, headers: [("Content-Type", "application/json")], body: try JSONEncoder().encode(tokens))
    }

    /// How many requests went to `path`.
    func count(_ path: String) -> Int {
        requests.filter { URLComponents(string: $0.url)?.path == path }.count
    }

    /// The last request sent to `path`.
    func last(_ path: String) -> HTTPTransportRequest? {
        requests.last { URLComponents(string: $0.url)?.path == path }
    }

    // MARK: Tokens

    /// The claims of a fresh, valid ID token for the test client.
    nonisolated func claims(now: Int, nonce: String?, sub: String = "user-1") -> IDTokenClaims {
        IDTokenClaims(
            iss: Self.issuer, sub: sub, aud: [Self.clientID], azp: nil, exp: now + 600, iat: now,
            authTime: now, nonce: nonce, acr: nil, amr: ["pwd"], atHash: nil)
    }

    /// `claims` signed ES256 with `key` (default the provider's), with header `kid`.
    func sign(_ claims: IDTokenClaims, kid: String? = "key-1", key: P256.Signing.PrivateKey? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        let identifier = kid.map { JWKIdentifier(string: $0) }
        await keys.add(ecdsa: try ES256PrivateKey(backing: key ?? signingKey), kid: identifier)
        return try await keys.sign(claims, kid: identifier)
    }

    /// `claims` as an HS256 token keyed with `secret`, as an attacker holding the client secret could make.
    nonisolated func signHS256(_ claims: IDTokenClaims, secret: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: "key-1")
        return try await keys.sign(claims, kid: "key-1")
    }

    /// An unsigned `alg: none` token with the given signature part.
    nonisolated func unsigned(_ claims: IDTokenClaims, signature: String) throws -> String {
        let header = Data(#"{"alg":"none","kid":"key-1"}"#.utf8).base64URLEncodedString()
        let payload = try JSONEncoder().encode(claims).base64URLEncodedString()
        return header + "." + payload + "." + signature
    }

    // MARK: Discovery

    private func discoveryDocument() -> [String: Any] {
        let base = Self.issuer
        var document: [String: Any] = [
            "issuer": discoveryIssuer,
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/token",
            "jwks_uri": base + "/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        ]
        if minimalDiscovery { return document }
        document.merge([
            "userinfo_endpoint": base + "/userinfo",
            "revocation_endpoint": base + "/revoke",
            "end_session_endpoint": base + "/logout?ui=1",
            "scopes_supported": ["openid", "profile", "email"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic", "client_secret_post", "none"],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
            "revocation_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "email"],
            "prompt_values_supported": ["none", "login"],
            "acr_values_supported": [String](),
            "ui_locales_supported": ["en"],
            "authorization_response_iss_parameter_supported": issParameterSupported,
            "claims_parameter_supported": false,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
        ]) { $1 }
        return document
    }

    private func json(_ object: [String: Any]) -> HTTPTransportResponse {
        let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return HTTPTransportResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
    }
}

/// A relying party for the fake provider with the given client authentication and clock.
func makeRelyingParty(
    _ provider: FakeProvider, clock: TestClock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000)),
    authentication: ClientAuthentication = .none,
    random: SecureRandom = SecureRandom()
) -> RelyingParty {
    RelyingParty(
        configuration: RelyingPartyConfiguration(
            issuer: FakeProvider.issuer, clientID: FakeProvider.clientID, clientAuthentication: authentication),
        transport: provider, now: clock.read, random: random)
}

/// The form parameters of a request body, or of a URL's query.
func form(_ request: HTTPTransportRequest?) -> FormParameters? {
    request?.body.flatMap { FormParameters(encoded: String(decoding: $0, as: UTF8.self)) }
}

func query(_ url: URL) -> FormParameters? {
    FormParameters(encoded: URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? "")
}

/// The redirect the provider would send back for `pending`, with extra query parameters.
func redirect(_ pending: PendingAuthorization, _ parameters: [(String, String)]) -> URL {
    var form = FormParameters()
    for (name, value) in parameters { form.append(name, value) }
    return URL(string: pending.redirectURI + "?" + form.encoded)!
}
