import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Token endpoint: authorization_code")
struct TokenEndpointTests {
    @Test("the code flow with private_key_jwt returns tokens whose ID token carries every required claim")
    func happyPath() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (authorization, response) = try await fixture.backendTokens()
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "no-store")
            let tokens = try response.decode(TokenResponse.self)
            #expect(tokens.tokenType == "Bearer")
            #expect(tokens.refreshToken != nil)
            let jwks = try await ScriptedBrowser().get(provider.url("/jwks")).decode(PublicJWKS.self)
            let idToken = try #require(tokens.idToken)
            let (header, claims) = try #require(TestJWS.verifiedES256(idToken, jwks: jwks))
            #expect(header["typ"] as? String == "JWT")
            #expect(claims["iss"] as? String == provider.issuer)
            #expect(claims["sub"] as? String == fixture.user.id)
            #expect(claims["aud"] as? [String] == ["backend"])
            #expect(claims["azp"] as? String == "backend")
            #expect(claims["nonce"] as? String == authorization.nonce)
            #expect(claims["acr"] as? String == "urn:signet:loa:1")
            #expect(claims["amr"] as? [String] == ["pwd"])
            #expect(claims["auth_time"] as? Int != nil)
            #expect(claims["at_hash"] as? String == TokenHash.sha256Half(of: tokens.accessToken))
            #expect(claims["preferred_username"] as? String == "alice")
            let (accessHeader, access) = try #require(TestJWS.verifiedES256(tokens.accessToken, jwks: jwks))
            #expect(accessHeader["typ"] as? String == "at+jwt")
            #expect(access["client_id"] as? String == "backend")
            #expect(access["scope"] as? String == "openid profile email")
            #expect(access["jti"] as? String != nil)
        }
    }

    @Test("a public client redeems with PKCE alone")
    func publicClient() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.appAuthorization
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let response = try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")])
            #expect(response.status == 200)
        }
    }

    @Test("client_secret_basic and client_secret_post authenticate; wrong secrets get 401, Basic with WWW-Authenticate")
    func secrets() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            for (client, good, bad) in [
                ("basic", [] as [(String, String)], [] as [(String, String)]),
                ("post", [("client_id", "post"), ("client_secret", fixture.postSecret)], [("client_id", "post"), ("client_secret", "wrong")]),
            ] {
                let authorization = TestAuthorization(clientID: client, redirectURI: Fixture.backendRedirect)
                let basicHeader = { (secret: String) in [("Authorization", "Basic " + Data("basic:\(secret)".utf8).base64EncodedString())] }
                let badCode = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
                let refused = try await provider.redeem(
                    badCode, authorization, clientAuth: bad, headers: client == "basic" ? basicHeader("wrong") : [])
                #expect(refused.status == 401)
                #expect(refused.oauthError == "invalid_client")
                if client == "basic" { #expect(refused.header("WWW-Authenticate")?.hasPrefix("Basic") == true) }
                let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
                let accepted = try await provider.redeem(
                    code, authorization, clientAuth: good, headers: client == "basic" ? basicHeader(fixture.basicSecret) : [])
                #expect(accepted.status == 200)
            }
        }
    }

    @Test("a confidential client cannot skip authentication, and two methods at once are refused")
    func authenticationRequired() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.backendAuthorization
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let none = try await provider.redeem(code, authorization, clientAuth: [("client_id", "backend")])
            #expect(none.status == 401)
            #expect(none.oauthError == "invalid_client")
            let both = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion() + [("client_secret", "x")])
            #expect(both.status == 400)
            #expect(both.oauthError == "invalid_request")
        }
    }

    @Test("a redeemed code fails the second time and revokes the tokens issued from it")
    func codeReplay() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.backendAuthorization
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let first = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            #expect(first.status == 200)
            let tokens = try first.decode(TokenResponse.self)
            let userInfo = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")])
            #expect(userInfo.status == 200)

            let second = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            #expect(second.status == 400)
            #expect(second.oauthError == "invalid_grant")
            let revoked = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")])
            #expect(revoked.status == 401)
            let refresh = try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", tokens.refreshToken!)] + (try fixture.assertion()))
            #expect(refresh.oauthError == "invalid_grant")
        }
    }

    @Test("a code redeemed by another client, with a wrong verifier or redirect, or after 60 s fails with invalid_grant")
    func codeBindings() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            // Issued to backend, redeemed by app.
            var authorization = fixture.backendAuthorization
            var code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            var response = try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")])
            #expect(response.oauthError == "invalid_grant")
            // Wrong verifier.
            code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            var wrong = authorization
            wrong.verifier = PKCE.makeVerifier()
            response = try await provider.redeem(code, wrong, clientAuth: try fixture.assertion())
            #expect(response.oauthError == "invalid_grant")
            // Wrong redirect URI.
            code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            wrong = authorization
            wrong.redirectURI = Fixture.backendRedirect + "/x"
            response = try await provider.redeem(code, wrong, clientAuth: try fixture.assertion())
            #expect(response.oauthError == "invalid_grant")
            // Expired.
            authorization = fixture.backendAuthorization
            code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            provider.clock.advance(by: 61)
            response = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            #expect(response.oauthError == "invalid_grant")
            // Missing verifier.
            code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            response = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", authorization.redirectURI)] + (try fixture.assertion()))
            #expect(response.status == 400)
            #expect(response.oauthError == "invalid_request")
        }
    }

    @Test("50 concurrent redemptions of one code yield exactly one success")
    func concurrentRedemption() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.appAuthorization
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")]).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 400 }.count == 49)
        }
    }

    @Test("bad grant types, duplicated parameters, wrong content types and huge bodies get specific 4xx errors")
    func malformedRequests() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            var response = try await browser.post(provider.url("/token"), form: [("grant_type", "password"), ("client_id", "app")])
            #expect(response.oauthError == "unsupported_grant_type")
            response = try await browser.post(provider.url("/token"), form: [("client_id", "app")])
            #expect(response.oauthError == "invalid_request")
            response = try await browser.post(
                provider.url("/token"), form: [("grant_type", "authorization_code"), ("grant_type", "refresh_token"), ("client_id", "app")])
            #expect(response.status == 400)
            #expect(response.oauthError == "invalid_request")
            // A JSON body is a wrong request (form encoding is required), not an unsupported type.
            response = try await browser.post(
                provider.url("/token"), form: [("grant_type", "authorization_code"), ("client_id", "app")],
                headers: [("Content-Type", "application/json")])
            #expect(response.status == 400)
            #expect(response.oauthError == "invalid_request")
            #expect((response.json["error_description"] as? String)?.contains("form-encoded") == true)
            response = try await browser.post(
                provider.url("/token"), form: [("grant_type", "authorization_code"), ("client_id", "app")], headers: [("Content-Type", "text/plain")])
            #expect(response.status == 415)
            #expect(response.oauthError == "invalid_request")
            response = try await browser.post(
                provider.url("/token"),
                form: [("grant_type", "authorization_code"), ("client_id", "app"), ("code", String(repeating: "a", count: 100_000))])
            #expect(response.status == 413)
            response = try await browser.send(
                "POST", provider.url("/token"), body: "%zz=1", headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(response.status == 400)
            response = try await browser.post(
                provider.url("/token"),
                form: [
                    ("grant_type", "authorization_code"), ("client_id", "app"), ("code", "nope"), ("redirect_uri", Fixture.appRedirect),
                    ("code_verifier", PKCE.makeVerifier()),
                ])
            #expect(response.oauthError == "invalid_grant")
            _ = fixture
        }
    }
}
