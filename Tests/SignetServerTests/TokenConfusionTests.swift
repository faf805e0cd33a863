// What the review of PAR, JAR and DPoP found, each pinned by a test.
import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Token confusion: JWT types, hints in request objects, used codes of other clients, crit, the return page")
struct TokenConfusionTests {
    /// Request-object claims for the fixture's backend client.
    func objectClaims(_ provider: TestProvider, _ authorization: TestAuthorization, extra: [String: Any] = [:]) -> [String: Any] {
        let now = Int(provider.clock.now.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": "backend", "sub": "backend", "aud": provider.issuer, "exp": now + 120, "nbf": now, "iat": now, "jti": UUID().uuidString,
        ]
        for (name, value) in authorization.parameters() { claims[name] = value }
        return claims.merging(extra) { $1 }
    }

    @Test("a request object cannot authenticate a client, and a client assertion cannot pass as a request object")
    func typeConfusion() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let object = try TestJWS.es256(
                header: ["alg": "ES256", "kid": fixture.backendKey.keyID, "typ": "oauth-authz-req+jwt"],
                claims: objectClaims(provider, fixture.backendAuthorization),
                key: fixture.backendKey.privateKey)
            let asAssertion = try await ScriptedBrowser().post(provider.url("/revoke"), form: [("token", "x")] + TestJWS.assertionFields(object))
            #expect(asAssertion.status == 401)
            #expect(asAssertion.oauthError == "invalid_client")
            let assertion = try TestJWS.es256(
                header: ["alg": "ES256", "kid": fixture.backendKey.keyID, "typ": "JWT"], claims: objectClaims(provider, fixture.backendAuthorization),
                key: fixture.backendKey.privateKey)
            let asObject = try await ScriptedBrowser().get(
                provider.url("/authorize?") + FormParameters([("client_id", "backend"), ("request", assertion)]).encoded)
            #expect(asObject.status == 400)
            #expect(asObject.body.contains("invalid_request_object"))
        }
    }

    @Test("the native login start takes id_token_hint from the request object, never from beside it")
    func nativeHintFromObject() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            try await provider.admin.updateClient(id: "backend", .init(nativeLogin: true))
            let idToken = try #require(try await fixture.backendTokens().1.decode(TokenResponse.self).idToken)
            try await provider.admin.addUser(username: "bob", password: "bobs passphrase")
            let app = NativeApp(provider, clientID: "backend", redirectURI: Fixture.backendRedirect)
            let object = try TestJWS.es256(
                header: ["alg": "ES256", "kid": fixture.backendKey.keyID, "typ": "oauth-authz-req+jwt"],
                claims: objectClaims(provider, app.authorization, extra: ["id_token_hint": idToken]), key: fixture.backendKey.privateKey)
            let started = try await app.post("start", ["client_id": "backend", "request": object])
            let handle = try #require(started.json["login_session"] as? String)
            _ = try await app.step("scenario", handle, ["scenario": LoginScenario.usernamePassword.rawValue])
            // The hint (alice) is in the signed object: bob cannot finish this login.
            let bob = try await app.step("username_password", handle, ["username": "bob", "password": "bobs passphrase"])
            #expect(bob.oauthError == "invalid_credentials")
        }
    }

    @Test("another client holding a used code cannot end the grant it belongs to")
    func usedCodeOfAnotherClient() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (authorization, code) = try await fixture.backendCode()
            let tokens = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion()).decode(TokenResponse.self)
            let thief = try await provider.redeem(code, fixture.appAuthorization, clientAuth: [("client_id", "app")])
            #expect(thief.oauthError == "invalid_grant")
            let refreshed = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken))] + (try fixture.assertion()))
            #expect(refreshed.status == 200)
        }
    }

    @Test("a JWS with crit header parameters is refused")
    func critical() throws {
        let key = P256.Signing.PrivateKey()
        let token = try TestJWS.es256(header: ["alg": "ES256", "crit": ["urn:example:x"], "urn:example:x": true], claims: ["a": 1], key: key)
        #expect(CompactJWT.parse(token) == .failure(.criticalExtension))
    }

    @Test("the app_claimed_https page does not say 'Signed in' when it carries an error")
    func returnPageForErrors() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let page = try await ScriptedBrowser().get(
                fixture.backendAuthorization.url(
                    issuer: provider.issuer, extra: [("prompt", "none"), ("redirect_uri_https_type", "app_claimed_https")]))
            #expect(page.status == 200)
            #expect(page.body.contains("Sign-in not completed"))
            #expect(!page.body.contains("<h1>Signed in</h1>"))
            #expect(page.body.contains("error=login_required"))
        }
    }
}
