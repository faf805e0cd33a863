import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("private_key_jwt client assertions (RFC 7523)")
struct ClientAssertionTests {
    /// Redeems a fresh code for the backend with the given assertion fields.
    func redeem(_ fixture: Fixture, _ assertion: [(String, String)]) async throws -> ScriptedResponse {
        let authorization = fixture.backendAuthorization
        let code = try await fixture.provider.signIn(authorization, username: "alice", password: Fixture.password)
        return try await fixture.provider.redeem(code, authorization, clientAuth: assertion)
    }

    func claims(_ fixture: Fixture, _ change: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
        var claims = TestJWS.assertionClaims(clientID: "backend", audience: fixture.provider.url("/token"), now: fixture.provider.clock.now)
        change(&claims)
        return claims
    }

    func signed(_ fixture: Fixture, header: [String: Any]? = nil, _ change: (inout [String: Any]) -> Void = { _ in }) throws -> [(String, String)] {
        TestJWS.assertionFields(
            try TestJWS.es256(
                header: header ?? ["alg": "ES256", "kid": fixture.backendKey.keyID], claims: claims(fixture, change),
                key: fixture.backendKey.privateKey))
    }

    @Test("the issuer itself is accepted as aud as well as the token endpoint URL")
    func audiences() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            #expect(try await redeem(fixture, try fixture.assertion(audience: provider.issuer)).status == 200)
            #expect(try await redeem(fixture, try fixture.assertion()).status == 200)
        }
    }

    @Test("aud must be exactly the issuer or the token endpoint URL as one string: arrays, even [issuer], are invalid_client (RFC 7523bis)")
    func audienceIsOneString() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let refused: [(String, Any)] = [
                ("[issuer]", [provider.issuer]), ("[token endpoint]", [provider.url("/token")]),
                ("[issuer, other]", [provider.issuer, "https://other.example.com"]),
                ("[]", [String]()), ("issuer with a trailing slash", provider.issuer + "/"),
                ("token endpoint with a query", provider.url("/token?x=1")),
                ("revocation endpoint", provider.url("/revoke")), ("a number", 1),
            ]
            for (name, audience) in refused {
                let response = try await redeem(fixture, try signed(fixture) { $0["aud"] = audience })
                #expect(response.status == 401, "\(name)")
                #expect(response.oauthError == "invalid_client", "\(name)")
            }
            let array = try await redeem(fixture, try signed(fixture) { $0["aud"] = [provider.issuer] })
            #expect((array.json["error_description"] as? String)?.contains("single string") == true)

            for audience in [provider.issuer, provider.url("/token")] {
                #expect(try await redeem(fixture, try signed(fixture) { $0["aud"] = audience }).status == 200, "\(audience)")
            }
            // The revocation endpoint takes the same two audiences, and no other.
            for (audience, status) in [
                (provider.issuer, 200), (provider.url("/token"), 200), (provider.url("/revoke"), 401), ([provider.issuer], 401),
            ] as [(Any, Int)] {
                let response = try await ScriptedBrowser().post(
                    provider.url("/revoke"), form: [("token", "unknown")] + (try signed(fixture) { $0["aud"] = audience }))
                #expect(response.status == status, "\(audience)")
            }
        }
    }

    @Test("a replayed assertion (same jti) is refused")
    func replay() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let assertion = try fixture.assertion(jti: "once")
            #expect(try await redeem(fixture, assertion).status == 200)
            let replayed = try await redeem(fixture, assertion)
            #expect(replayed.status == 401)
            #expect(replayed.oauthError == "invalid_client")
        }
    }

    @Test("wrong aud, expired, far-future exp, wrong iss/sub and missing jti are refused with 401 invalid_client")
    func badClaims() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let now = Int(provider.clock.now.timeIntervalSince1970)
            let cases: [(String, (inout [String: Any]) -> Void)] = [
                ("wrong aud", { $0["aud"] = "https://other.example.com/token" }),
                ("expired", { $0["exp"] = now - 120 }),
                ("far-future exp", { $0["exp"] = now + 3600 }),
                ("wrong iss", { $0["iss"] = "app" }),
                ("wrong sub", { $0["sub"] = "someone" }),
                ("missing jti", { $0["jti"] = nil }),
                ("iat in the future", { $0["iat"] = now + 600 }),
            ]
            for (name, change) in cases {
                let response = try await redeem(fixture, try signed(fixture, change))
                #expect(response.status == 401, "\(name)")
                #expect(response.oauthError == "invalid_client", "\(name)")
            }
        }
    }

    @Test("alg none, HS256 keyed with the public key, an unknown kid and a foreign key are refused")
    func badSignatures() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let none = try TestJWS.unsecured(claims: claims(fixture))
            var response = try await redeem(fixture, TestJWS.assertionFields(none))
            #expect(response.status == 401)

            // The classic confusion attack: HMAC keyed with the client's public key.
            let publicKeyBytes = fixture.backendKey.privateKey.publicKey.x963Representation
            let hs256 = try TestJWS.hs256(header: ["alg": "HS256", "kid": fixture.backendKey.keyID], claims: claims(fixture), secret: publicKeyBytes)
            response = try await redeem(fixture, TestJWS.assertionFields(hs256))
            #expect(response.status == 401)
            let hs256JWKS = try TestJWS.hs256(
                header: ["alg": "HS256", "kid": fixture.backendKey.keyID], claims: claims(fixture), secret: Data(fixture.backendKey.publicJWKS.utf8))
            response = try await redeem(fixture, TestJWS.assertionFields(hs256JWKS))
            #expect(response.status == 401)

            response = try await redeem(fixture, try signed(fixture, header: ["alg": "ES256", "kid": "unknown"]))
            #expect(response.status == 401)

            let foreign = TestJWS.assertionFields(
                try TestJWS.es256(header: ["alg": "ES256", "kid": fixture.backendKey.keyID], claims: claims(fixture), key: P256.Signing.PrivateKey()))
            response = try await redeem(fixture, foreign)
            #expect(response.status == 401)
            #expect(response.oauthError == "invalid_client")

            response = try await redeem(fixture, [("client_assertion_type", "urn:wrong"), ("client_assertion", none)])
            #expect(response.status == 400)
            response = try await redeem(fixture, TestJWS.assertionFields("not.a.jwt"))
            #expect(response.status == 401)
        }
    }

    @Test("an assertion refused for a bad signature does not burn its jti")
    func refusedAssertionDoesNotBurnJTI() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let forged = TestJWS.assertionFields(
                try TestJWS.es256(
                    header: ["alg": "ES256", "kid": fixture.backendKey.keyID], claims: claims(fixture) { $0["jti"] = "shared" },
                    key: P256.Signing.PrivateKey()))
            #expect(try await redeem(fixture, forged).status == 401)
            #expect(try await redeem(fixture, try fixture.assertion(jti: "shared")).status == 200)
        }
    }
}

@Suite("private_key_jwt with a jwks_uri")
struct ClientJWKSURITests {
    @Test("keys are fetched from the client's jwks_uri, and a kid it does not publish is refused")
    func jwksURI() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            // The provider's own /jwks stands in for the client's key endpoint: sign with its active key.
            let active = try #require(try await provider.store.signingKeys().first { $0.status == .active })
            let key = try SigningKeyFactory.privateKey(pem: active.privateKeyPEM)
            _ = try await provider.admin.addClient(
                .init(
                    id: "remote", name: "Remote Keys", authMethod: .privateKeyJWT, redirectURIs: [Fixture.backendRedirect],
                    jwksURI: provider.url("/jwks")))
            let authorization = TestAuthorization(clientID: "remote", redirectURI: Fixture.backendRedirect)
            func assertion(kid: String) throws -> [(String, String)] {
                TestJWS.assertionFields(
                    try TestJWS.es256(
                        header: ["alg": "ES256", "kid": kid],
                        claims: TestJWS.assertionClaims(clientID: "remote", audience: provider.url("/token"), now: provider.clock.now), key: key))
            }
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            #expect(try await provider.redeem(code, authorization, clientAuth: try assertion(kid: active.kid)).status == 200)
            let other = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let refused = try await provider.redeem(other, authorization, clientAuth: try assertion(kid: "not-published"))
            #expect(refused.status == 401)
            #expect(refused.oauthError == "invalid_client")
        }
    }
}
