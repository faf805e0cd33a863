// Signed request objects (RFC 9101): only what the client signed counts, and every way a
// request object can be wrong is refused before anything is redirected.
import Crypto
import Foundation
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("JAR: signed request objects")
struct RequestObjectTests {
    let key = ClientKeyPair()

    /// A private_key_jwt backend, required to sign, and its kit.
    func backend(_ provider: TestProvider) async throws -> RelyingParty {
        var new = SignetAdmin.NewClient(
            id: "service", name: "Service", authMethod: .privateKeyJWT, redirectURIs: ["com.example.service:/cb", "com.example.service:/other"],
            jwks: key.publicJWKS)
        new.requireSignedRequestObject = true
        _ = try await provider.admin.addClient(new)
        _ = try await provider.admin.addUser(username: "bob", password: "a long passphrase", name: "Bob")
        let clock = provider.clock
        return RelyingParty(
            configuration: RelyingPartyConfiguration(
                issuer: provider.issuer, clientID: "service", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID)),
            now: { clock.now })
    }

    /// Valid request-object claims for `service`, which a test then spoils.
    func claims(_ provider: TestProvider, _ authorization: TestAuthorization) -> [String: Any] {
        let now = Int(provider.clock.now.timeIntervalSince1970)
        var claims: [String: Any] = ["iss": "service", "aud": provider.issuer, "exp": now + 300, "nbf": now, "iat": now, "jti": UUID().uuidString]
        for (name, value) in authorization.parameters() { claims[name] = value }
        return claims
    }

    func sign(_ claims: [String: Any], header: [String: Any]? = nil, with signer: P256.Signing.PrivateKey? = nil) throws -> String {
        try TestJWS.es256(
            header: header ?? ["alg": "ES256", "kid": key.keyID, "typ": "oauth-authz-req+jwt"], claims: claims, key: signer ?? key.privateKey)
    }

    func authorize(_ provider: TestProvider, _ pairs: [(String, String)]) async throws -> ScriptedResponse {
        try await ScriptedBrowser().get(provider.url("/authorize?") + FormParameters(pairs).encoded)
    }

    @Test("the kit signs the request; only client_id and request travel; the flow completes, and parameters beside the object do not count")
    func signedFlow() async throws {
        try await withTestProvider { provider in
            let relyingParty = try await backend(provider)
            let request = try await relyingParty.makeAuthorizationRequest(
                redirectURI: "com.example.service:/cb", scope: "openid profile", signed: true)
            let query = try #require(FormParameters(encoded: request.url.query ?? ""))
            #expect(Set(query.pairs.map(\.name)) == ["client_id", "request"])
            // An attacker adds a redirect_uri and a state beside the object: ignored, never merged.
            let tampered =
                request.url.absoluteString + "&" + FormParameters([("redirect_uri", "com.example.service:/other"), ("state", "forged")]).encoded
            let browser = ScriptedBrowser()
            let page = try await browser.get(tampered)
            let fields = try #require(LoginForm.fields(in: page.body))
            let login = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "bob"), ("password", "a long passphrase"),
                ])
            let redirect = try #require(login.header("Location").flatMap(URL.init(string:)))
            #expect(redirect.absoluteString.hasPrefix("com.example.service:/cb?"))
            let completed = try await relyingParty.completeAuthorization(redirect: redirect, pending: request.pending)
            #expect(completed.idToken.aud == ["service"])
            // Used once: the same object again is refused.
            let replay = try await ScriptedBrowser().get(request.url.absoluteString)
            #expect(replay.status == 400)
            #expect(replay.body.contains("invalid_request_object"))
        }
    }

    @Test("pushed and signed together (the FAPI 2.0 shape): the kit pushes a signed request object")
    func pushedAndSigned() async throws {
        try await withTestProvider { provider in
            let relyingParty = try await backend(provider)
            try await provider.admin.updateClient(id: "service", .init(requirePushedAuthorizationRequests: true))
            let request = try await relyingParty.pushAuthorizationRequest(redirectURI: "com.example.service:/cb", signed: true)
            #expect(try await ScriptedBrowser().get(request.url.absoluteString).status == 200)
            // Pushed but not signed: refused for a client that must sign.
            let unsigned = try await ScriptedBrowser().post(
                provider.url("/par"),
                form: TestAuthorization(clientID: "service", redirectURI: "com.example.service:/cb").parameters()
                    + TestJWS.assertionFields(
                        try TestJWS.clientAssertion(key, clientID: "service", audience: provider.issuer, now: provider.clock.now)))
            #expect(unsigned.status == 400)
            #expect(unsigned.oauthError == "invalid_request")
        }
    }

    @Test("a client that must sign cannot send plain parameters")
    func requiredSigning() async throws {
        try await withTestProvider { provider in
            let relyingParty = try await backend(provider)
            let plain = try await relyingParty.makeAuthorizationRequest(redirectURI: "com.example.service:/cb")
            let answer = try await ScriptedBrowser().get(plain.url.absoluteString)
            #expect(answer.locationParameters?["error"] == "invalid_request")
        }
    }

    @Test(
        "request objects that are unsigned, HMAC-signed, signed by another key, expired, too long-lived, for another audience, replayed or nested are refused"
    )
    func hostileObjects() async throws {
        try await withTestProvider { provider in
            _ = try await backend(provider)
            let authorization = TestAuthorization(clientID: "service", redirectURI: "com.example.service:/cb")
            let now = Int(provider.clock.now.timeIntervalSince1970)
            func refused(_ object: String, clientID: String = "service", _ label: String) async throws {
                let answer = try await authorize(provider, [("client_id", clientID), ("request", object)])
                #expect(answer.status == 400, "\(label)")
                #expect(answer.header("Location") == nil, "\(label)")
                #expect(answer.body.contains("invalid_request_object"), "\(label)")
            }
            var spoiled = claims(provider, authorization)
            try await refused(try TestJWS.unsecured(claims: spoiled), "alg none")
            try await refused(try TestJWS.hs256(header: ["alg": "HS256", "kid": key.keyID], claims: spoiled, secret: Data("secret".utf8)), "HS256")
            try await refused(try sign(spoiled, with: P256.Signing.PrivateKey()), "unknown key")
            try await refused(try sign(spoiled, header: ["alg": "ES256", "kid": key.keyID, "typ": "at+jwt"]), "wrong typ")
            spoiled["exp"] = now - 120
            try await refused(try sign(spoiled), "expired")
            spoiled = claims(provider, authorization)
            spoiled["exp"] = now + 7_200
            try await refused(try sign(spoiled), "exp two hours ahead")
            spoiled = claims(provider, authorization)
            spoiled["nbf"] = nil
            try await refused(try sign(spoiled), "no nbf")
            spoiled = claims(provider, authorization)
            spoiled["aud"] = provider.url("/token")
            try await refused(try sign(spoiled), "aud the token endpoint")
            spoiled = claims(provider, authorization)
            spoiled["iss"] = "other"
            try await refused(try sign(spoiled), "iss another client")
            spoiled = claims(provider, authorization)
            spoiled["jti"] = nil
            try await refused(try sign(spoiled), "no jti")
            spoiled = claims(provider, authorization)
            spoiled["request_uri"] = "urn:ietf:params:oauth:request_uri:x"
            try await refused(try sign(spoiled), "nested request_uri")
            spoiled = claims(provider, authorization)
            spoiled["client_id"] = "other"
            try await refused(try sign(spoiled), "client_id inside differs")
            // Signed by service but presented as another client.
            _ = try await provider.admin.addClient(.init(id: "app", name: "App", authMethod: .none, redirectURIs: ["com.example.app:/cb"]))
            try await refused(try sign(claims(provider, authorization)), clientID: "app", "presented by another client")
            // A repeated member, which JSONDecoder would silently collapse.
            let repeated = try TestJWS.es256(
                headerJSON: #"{"alg":"ES256","kid":"\#(key.keyID)"}"#,
                claimsJSON:
                    #"{"iss":"service","aud":"\#(provider.issuer)","exp":\#(now + 300),"nbf":\#(now),"jti":"r1","redirect_uri":"com.example.service:/cb","redirect_uri":"com.example.service:/other"}"#,
                key: key.privateKey)
            try await refused(repeated, "repeated member")
            // The same jti twice: the second is refused.
            let once = claims(provider, authorization)
            #expect(try await authorize(provider, [("client_id", "service"), ("request", try sign(once))]).status == 200)
            try await refused(try sign(once), "replayed jti")
        }
    }

    @Test("the native login start reads a request object signed on the service's backend")
    func nativeStart() async throws {
        try await withTestProvider { provider in
            _ = try await backend(provider)
            try await provider.admin.updateClient(id: "service", .init(nativeLogin: true))
            let authorization = TestAuthorization(clientID: "service", redirectURI: "com.example.service:/cb")
            let body = try JSONSerialization.data(withJSONObject: ["client_id": "service", "request": try sign(claims(provider, authorization))])
            let started = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"), body: String(decoding: body, as: UTF8.self),
                headers: [("Content-Type", "application/json")])
            #expect(started.status == 201)
            let plain = try JSONSerialization.data(withJSONObject: Dictionary(uniqueKeysWithValues: authorization.parameters().map { ($0.0, $0.1) }))
            let refused = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"), body: String(decoding: plain, as: UTF8.self),
                headers: [("Content-Type", "application/json")])
            #expect(refused.status == 400)
            #expect(refused.oauthError == "invalid_request")
        }
    }
}
