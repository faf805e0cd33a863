// The example protected API end to end: the provider and the API each in-process on port 0,
// tokens obtained through the relying-party kit, every request over real HTTP.
import Crypto
import Foundation
import Logging
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer
import SignetTesting
import Testing

@testable import ProtectedAPIExample

/// The API's public identity: behind a TLS-terminating proxy in production, so its public URL is
/// not the loopback address the tests connect to. Proofs name the public URL.
enum API {
    static let audience = "https://api.example.com"
    static let publicURL = "https://api.example.com"
    static let accounts = publicURL + "/accounts"
    static let otherAudience = "https://payments.example.com"
}

/// Runs the example API (the same `buildApplication` as its `main`) on a free loopback port.
func withProtectedAPI<Result: Sendable>(
    _ provider: TestProvider, environment extra: [String: String] = [:], _ body: (_ baseURL: String) async throws -> Result
) async throws -> Result {
    let environment = ["SIGNET_ISSUER": provider.issuer, "API_AUDIENCE": API.audience, "API_PUBLIC_URL": API.publicURL, "API_PORT": "0"]
        .merging(extra) { $1 }
    let configuration = try ProtectedAPIConfiguration(environment: environment)
    let clock = provider.clock
    var logger = Logger(label: "protected-api.test")
    logger.logLevel = ProcessInfo.processInfo.environment["SIGNET_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    return try await withRunningService("the protected API", logger: logger) { [logger] listening in
        buildApplication(configuration: configuration, now: { clock.now }, logger: logger, onServerRunning: listening)
    } _: { port in
        try await body("http://127.0.0.1:\(port)")
    }
}

/// A backend registered at the provider with the API among its resources, signing in bob through the kit.
struct Backend {
    static let redirectURI = "https://service.example.com/cb"
    let provider: TestProvider
    let clientKey: ClientKeyPair
    let dpopKey = P256.Signing.PrivateKey()
    let userID: String

    static func register(_ provider: TestProvider) async throws -> Backend {
        let key = ClientKeyPair()
        var client = SignetAdmin.NewClient(
            id: "service", name: "Service", authMethod: .privateKeyJWT, redirectURIs: [redirectURI], jwks: key.publicJWKS)
        client.resources = [API.audience, API.otherAudience]
        _ = try await provider.admin.addClient(client)
        let user = try await provider.admin.addUser(username: "bob", password: "a long passphrase")
        return Backend(provider: provider, clientKey: key, userID: user.id)
    }

    /// The kit for this backend; with `dpop`, its tokens are bound to ``dpopKey``.
    func relyingParty(dpop: Bool) -> RelyingParty {
        let clock = provider.clock
        return RelyingParty(
            configuration: RelyingPartyConfiguration(
                issuer: provider.issuer, clientID: "service",
                clientAuthentication: .privateKeyJWT(privateKey: clientKey.privateKey, keyID: clientKey.keyID),
                dpopKey: dpop ? dpopKey : nil),
            now: { clock.now })
    }

    /// Signs bob in through the kit and returns the tokens.
    func tokens(dpop: Bool = true, scope: String = "openid profile", resource: String? = nil) async throws -> TokenResponse {
        let kit = relyingParty(dpop: dpop)
        let request = try await kit.makeAuthorizationRequest(
            redirectURI: Self.redirectURI, scope: scope, extraParameters: resource.map { ["resource": $0] } ?? [:])
        let login = try await provider.submitLogin(
            at: request.url.absoluteString, browser: ScriptedBrowser(), username: "bob", password: "a long passphrase")
        // A 303 to the redirect URI; anything else (the page again, an error) says why.
        try #require(login.status == 303, "\(login.status) \(login.body.prefix(300))")
        let redirect = try #require(login.header("Location").flatMap(URL.init(string:)))
        return try await kit.completeAuthorization(redirect: redirect, pending: request.pending).tokens
    }

    /// A DPoP proof (RFC 9449 §4.2) for `method` `url` with ``dpopKey`` unless another is given.
    func proof(
        _ method: String = "GET", _ url: String = API.accounts, accessToken: String?, iat: Date? = nil, jti: String = UUID().uuidString,
        key: P256.Signing.PrivateKey? = nil, header: [String: Any] = [:]
    ) throws -> String {
        let signer = key ?? dpopKey
        var claims: [String: Any] = ["htm": method, "htu": url, "iat": Int((iat ?? provider.clock.now).timeIntervalSince1970), "jti": jti]
        if let accessToken { claims["ath"] = Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString() }
        let fullHeader = ["typ": "dpop+jwt", "alg": "ES256", "jwk": Self.publicJWK(signer)].merging(header) { $1 }
        return try TestJWS.es256(header: fullHeader, claims: claims, key: signer)
    }

    static func publicJWK(_ key: P256.Signing.PrivateKey) -> [String: Any] {
        let jwk = PublicJWK(p256: key.publicKey, kid: "")
        return ["kty": "EC", "crv": "P-256", "x": jwk.x ?? "", "y": jwk.y ?? ""]
    }
}

extension ScriptedResponse {
    /// The `WWW-Authenticate` challenges, one per field.
    var challenges: [String] { headers("WWW-Authenticate") }
    /// The challenge of `scheme` (`DPoP` or `Bearer`).
    func challenge(_ scheme: String) -> String? { challenges.first { $0 == scheme || $0.hasPrefix(scheme + " ") } }
}

/// The claims of a compact JWS, unverified: for forging tokens from a real one.
func payload(of token: String) throws -> [String: Any] {
    let part = try #require(token.split(separator: ".").dropFirst().first.flatMap { Data(base64URLEncoded: String($0)) })
    return try #require(try JSONSerialization.jsonObject(with: part) as? [String: Any])
}

/// `object` as base64url JSON, a part of a compact JWS.
func encoded(_ object: [String: Any]) throws -> String {
    try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).base64URLEncodedString()
}

@Suite("Protected API: the example API behind AccessTokenMiddleware, against the provider")
struct ProtectedAPITests {
    // The example API takes FAPI 2.0 §5.4's algorithms only.
    let algs = #"algs="ES256 EdDSA PS256""#

    @Test("a DPoP-bound token from the kit with a fresh proof of its key gets 200 and the caller's sub and client_id")
    func accepted() async throws {
        try await withTestProvider { provider in
            let backend = try await Backend.register(provider)
            let tokens = try await backend.tokens()
            #expect(tokens.tokenType == "DPoP")
            try await withProtectedAPI(provider, environment: ["API_ACCOUNTS_SCOPE": "profile"]) { base in
                let answer = try await ScriptedBrowser().get(
                    base + "/accounts",
                    headers: [("Authorization", "DPoP \(tokens.accessToken)"), ("DPoP", try backend.proof(accessToken: tokens.accessToken))])
                #expect(answer.status == 200, "\(answer.body)")
                let accounts = try answer.decode(AccountsResponse.self)
                #expect(accounts.sub == backend.userID)
                #expect(accounts.clientID == "service")
                // Open routes stay open.
                #expect(try await ScriptedBrowser().get(base + "/health").status == 200)
            }
        }
    }

    @Test("the request: no Authorization is 401 with bare challenges; two headers, a token in the query or a form body are 400 invalid_request")
    func requestRefusals() async throws {
        try await withTestProvider { provider in
            let backend = try await Backend.register(provider)
            let token = try await backend.tokens().accessToken
            try await withProtectedAPI(provider, environment: ["API_ACCOUNTS_SCOPE": "profile"]) { base in
                let none = try await ScriptedBrowser().get(base + "/accounts")
                #expect(none.status == 401)
                #expect(none.oauthError == "invalid_request")
                // RFC 6750 §3.1: no error code in the challenge of a request without credentials; only DPoP is offered.
                #expect(none.challenges == ["DPoP \(algs)"])
                #expect(none.header("Cache-Control") == "no-store")

                let authorization = ("Authorization", "DPoP \(token)")
                let two = try await ScriptedBrowser().get(
                    base + "/accounts", headers: [authorization, authorization, ("DPoP", try backend.proof(accessToken: token))])
                #expect(two.status == 400)
                #expect(two.oauthError == "invalid_request")
                #expect(two.challenge("DPoP")?.contains(#"error="invalid_request""#) == true)

                let query = try await ScriptedBrowser().get(
                    base + "/accounts?access_token=\(token)", headers: [authorization, ("DPoP", try backend.proof(accessToken: token))])
                #expect(query.status == 400)
                #expect(query.oauthError == "invalid_request")
                let queryOnly = try await ScriptedBrowser().get(base + "/accounts?access%5Ftoken=\(token)")
                #expect(queryOnly.status == 400)
                #expect(queryOnly.oauthError == "invalid_request")

                let form = try await ScriptedBrowser().send(
                    "GET", base + "/accounts", body: "access_token=\(token)",
                    headers: [("Content-Type", "application/x-www-form-urlencoded"), ("DPoP", try backend.proof(accessToken: token))])
                #expect(form.status == 400)
                #expect(form.oauthError == "invalid_request")

                let basic = try await ScriptedBrowser().get(base + "/accounts", headers: [("Authorization", "Basic c2VydmljZTpzZWNyZXQ=")])
                #expect(basic.status == 401)
                #expect(basic.challenges == ["DPoP \(algs)"])
            }
        }
    }

    @Test("the binding: Bearer for a bound token, DPoP for an unbound one, and every bad proof are refused with their error and a DPoP challenge")
    func bindingRefusals() async throws {
        try await withTestProvider { provider in
            let backend = try await Backend.register(provider)
            let token = try await backend.tokens().accessToken
            let unbound = try await backend.tokens(dpop: false).accessToken
            try await withProtectedAPI(provider, environment: ["API_ACCOUNTS_SCOPE": "profile", "API_REQUIRE_DPOP": "false"]) { base in
                func call(_ scheme: String, _ token: String, proof: String?) async throws -> ScriptedResponse {
                    try await ScriptedBrowser().get(
                        base + "/accounts", headers: [("Authorization", "\(scheme) \(token)")] + (proof.map { [("DPoP", $0)] } ?? []))
                }
                let bearer = try await call("Bearer", token, proof: try backend.proof(accessToken: token))
                #expect(bearer.status == 401)
                #expect(bearer.oauthError == "invalid_token")
                #expect(bearer.challenge("DPoP")?.hasPrefix(#"DPoP \#(algs), error="invalid_token""#) == true)
                #expect(bearer.challenge("Bearer") == "Bearer")

                let dpopUnbound = try await call("DPoP", unbound, proof: try backend.proof(accessToken: unbound))
                #expect(dpopUnbound.status == 401)
                #expect(dpopUnbound.oauthError == "invalid_token")
                #expect(dpopUnbound.challenge("DPoP")?.contains(#"error="invalid_token""#) == true)

                var privateJWK = Backend.publicJWK(backend.dpopKey)
                privateJWK["d"] = backend.dpopKey.rawRepresentation.base64URLEncodedString()
                let now = provider.clock.now
                let badProofs: [(String, String?)] = [
                    ("missing proof", nil),
                    ("wrong htm", try backend.proof("POST", accessToken: token)),
                    // The Host the request reached is not the API's public URL.
                    ("wrong htu", try backend.proof("GET", base + "/accounts", accessToken: token)),
                    ("wrong ath", try backend.proof(accessToken: unbound)),
                    ("other key", try backend.proof(accessToken: token, key: P256.Signing.PrivateKey())),
                    ("private key in jwk", try backend.proof(accessToken: token, header: ["jwk": privateJWK])),
                    ("old iat", try backend.proof(accessToken: token, iat: now.addingTimeInterval(-300))),
                    // RFC 9449 §4.2: htu carries no query or fragment.
                    ("htu with a query", try backend.proof("GET", API.accounts + "?page=2", accessToken: token)),
                    ("htu with a fragment", try backend.proof("GET", API.accounts + "#top", accessToken: token)),
                ]
                for (label, proof) in badProofs {
                    let answer = try await call("DPoP", token, proof: proof)
                    #expect(answer.status == 401, "\(label)")
                    #expect(answer.oauthError == "invalid_dpop_proof", "\(label)")
                    #expect(answer.challenge("DPoP")?.contains(#"error="invalid_dpop_proof""#) == true, "\(label)")
                }
                let once = try backend.proof(accessToken: token)
                #expect(try await call("DPoP", token, proof: once).status == 200)
                let replayed = try await call("DPoP", token, proof: once)
                #expect(replayed.status == 401)
                #expect(replayed.oauthError == "invalid_dpop_proof")
                #expect((replayed.json["error_description"] as? String)?.contains("already used") == true)
            }
        }
    }

    @Test("the token: another audience, expired, an ID token, alg none and HS256 are 401 invalid_token")
    func tokenRefusals() async throws {
        try await withTestProvider { provider in
            let backend = try await Backend.register(provider)
            let tokens = try await backend.tokens()
            let otherAudience = try await backend.tokens(resource: API.otherAudience).accessToken
            #expect(try payload(of: otherAudience)["aud"] as? [String] == [API.otherAudience, provider.issuer])
            let claims = try payload(of: tokens.accessToken)
            let header = ["typ": "at+jwt", "kid": "any"]
            let noneToken = try encoded(header.merging(["alg": "none"]) { $1 }) + "." + encoded(claims) + ".AA"
            let hs256 = try TestJWS.hs256(header: header.merging(["alg": "HS256"]) { $1 }, claims: claims, secret: Data("a guessed secret".utf8))
            let idToken = try #require(tokens.idToken)
            try await withProtectedAPI(provider, environment: ["API_ACCOUNTS_SCOPE": "profile"]) { base in
                func call(_ token: String) async throws -> ScriptedResponse {
                    try await ScriptedBrowser().get(
                        base + "/accounts", headers: [("Authorization", "DPoP \(token)"), ("DPoP", try backend.proof(accessToken: token))])
                }
                for (label, token) in [("another audience", otherAudience), ("ID token", idToken), ("alg none", noneToken), ("HS256", hs256)] {
                    let answer = try await call(token)
                    #expect(answer.status == 401, "\(label)")
                    #expect(answer.oauthError == "invalid_token", "\(label)")
                    #expect(answer.challenge("DPoP")?.contains(#"error="invalid_token""#) == true, "\(label)")
                }
                // An ID token is refused for its type (RFC 9068 §4), before its audience is looked at.
                #expect((try await call(idToken).json["error_description"] as? String)?.contains("not an access token") == true)
                #expect(try await call(tokens.accessToken).status == 200)
                provider.clock.advance(by: 600 + 61)
                let expired = try await call(tokens.accessToken)
                #expect(expired.status == 401)
                #expect(expired.oauthError == "invalid_token")
                #expect((expired.json["error_description"] as? String)?.contains("expired") == true)
            }
        }
    }

    @Test("a token without the route's scope is 403 insufficient_scope, naming the scope in the challenge")
    func missingScope() async throws {
        try await withTestProvider { provider in
            let backend = try await Backend.register(provider)
            let token = try await backend.tokens().accessToken
            // The default configuration: GET /accounts needs the scope "accounts", which this token lacks.
            try await withProtectedAPI(provider) { base in
                let answer = try await ScriptedBrowser().get(
                    base + "/accounts", headers: [("Authorization", "DPoP \(token)"), ("DPoP", try backend.proof(accessToken: token))])
                #expect(answer.status == 403)
                #expect(answer.oauthError == "insufficient_scope")
                #expect(answer.challenge("DPoP")?.contains(#"error="insufficient_scope""#) == true)
                #expect(answer.challenge("DPoP")?.contains(#"scope="accounts""#) == true)
            }
        }
    }

    @Test("an unbound bearer token is accepted when sender constraint is not required, and refused when it is")
    func senderConstraint() async throws {
        try await withTestProvider { provider in
            let backend = try await Backend.register(provider)
            let bearer = try await backend.tokens(dpop: false)
            #expect(bearer.tokenType == "Bearer")
            try await withProtectedAPI(provider, environment: ["API_ACCOUNTS_SCOPE": "profile", "API_REQUIRE_DPOP": "false"]) { base in
                let answer = try await ScriptedBrowser().get(base + "/accounts", headers: [("Authorization", "Bearer \(bearer.accessToken)")])
                #expect(answer.status == 200, "\(answer.body)")
                #expect(try answer.decode(AccountsResponse.self).sub == backend.userID)
            }
            try await withProtectedAPI(provider, environment: ["API_ACCOUNTS_SCOPE": "profile"]) { base in
                let answer = try await ScriptedBrowser().get(base + "/accounts", headers: [("Authorization", "Bearer \(bearer.accessToken)")])
                #expect(answer.status == 401)
                #expect(answer.oauthError == "invalid_token")
                #expect(answer.challenges.count == 1)
                #expect(answer.challenge("DPoP")?.contains(#"error="invalid_token""#) == true)
            }
        }
    }

    @Test("50 parallel requests with one DPoP proof: exactly one 200, the rest invalid_dpop_proof")
    func parallelReplay() async throws {
        try await withTestProvider { provider in
            let backend = try await Backend.register(provider)
            let token = try await backend.tokens().accessToken
            let proof = try backend.proof(accessToken: token)
            try await withProtectedAPI(provider, environment: ["API_ACCOUNTS_SCOPE": "profile"]) { base in
                let answers = try await withThrowingTaskGroup(of: ScriptedResponse.self) { group in
                    for _ in 0..<50 {
                        group.addTask {
                            try await ScriptedBrowser().get(base + "/accounts", headers: [("Authorization", "DPoP \(token)"), ("DPoP", proof)])
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers.filter { $0.status == 200 }.count == 1)
                #expect(answers.filter { $0.status == 401 && $0.oauthError == "invalid_dpop_proof" }.count == 49)
            }
        }
    }

    @Test("the example's configuration needs issuer, audience and public URL, and refuses a bad port or switch")
    func configuration() throws {
        let good = ["SIGNET_ISSUER": "https://id.example.com", "API_AUDIENCE": API.audience, "API_PUBLIC_URL": API.publicURL]
        let configuration = try ProtectedAPIConfiguration(environment: good)
        #expect(configuration.requireSenderConstrained)
        #expect(configuration.accountsScope == "accounts")
        #expect(configuration.verifier.audience == API.audience)
        for missing in good.keys {
            #expect(throws: SignetError(.invalidConfiguration, "")) { try ProtectedAPIConfiguration(environment: good.filter { $0.key != missing }) }
        }
        #expect(throws: SignetError(.invalidConfiguration, "")) {
            try ProtectedAPIConfiguration(environment: good.merging(["API_PORT": "70000"]) { $1 })
        }
        #expect(throws: SignetError(.invalidConfiguration, "")) {
            try ProtectedAPIConfiguration(environment: good.merging(["API_REQUIRE_DPOP": "maybe"]) { $1 })
        }
    }
}
