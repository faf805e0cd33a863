// Access tokens name their audience — resource indicators, RFC 8707.
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Resource indicators (RFC 8707)")
struct ResourceIndicatorTests {
    static let accounts = "https://api.example.com/accounts"
    static let payments = "https://api.example.com/payments"

    func audience(of response: ScriptedResponse) throws -> [String] {
        let token = try response.decode(TokenResponse.self).accessToken
        let payload = try #require(token.split(separator: ".").dropFirst().first.flatMap { Data(base64URLEncoded: String($0)) })
        return try JSONDecoder().decode(AccessTokenClaims.self, from: payload).aud
    }

    @Test("without resources the access token is for the provider; with a default audience it is for that API and, with openid, the provider")
    func defaults() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (_, plain) = try await fixture.backendTokens()
            #expect(try audience(of: plain) == [provider.issuer])
            try await provider.admin.updateClient(id: "backend", .init(resources: [Self.accounts, Self.payments]))
            let (_, defaulted) = try await fixture.backendTokens()
            #expect(try audience(of: defaulted) == [Self.accounts, provider.issuer])
        }
    }

    @Test("resource at /authorize narrows the token's audience; /token may narrow it further, never widen it")
    func requestedResources() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            try await provider.admin.updateClient(id: "backend", .init(resources: [Self.accounts, Self.payments]))
            let authorization = fixture.backendAuthorization
            let code = try await provider.signIn(
                authorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password, extra: [("resource", Self.payments)])
            let widened = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", authorization.redirectURI),
                    ("code_verifier", authorization.verifier), ("resource", Self.accounts),
                ]
                    + (try fixture.assertion()))
            #expect(widened.oauthError == "invalid_target")
            let tokens = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            #expect(try audience(of: tokens) == [Self.payments, provider.issuer])
            // The token still works at UserInfo (the issuer is among its audiences).
            let access = try tokens.decode(TokenResponse.self).accessToken
            #expect(try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(access)")]).status == 200)
        }
    }

    @Test("an unregistered, relative or fragment resource is invalid_target; several may be asked for at once")
    func refusals() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            try await provider.admin.updateClient(id: "backend", .init(resources: [Self.accounts, Self.payments]))
            for resource in ["https://evil.example.com/api", "/relative", Self.accounts + "#x"] {
                let answer = try await ScriptedBrowser().get(
                    fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("resource", resource)]))
                #expect(answer.locationParameters?["error"] == "invalid_target", "\(resource)")
            }
            let both = try await ScriptedBrowser().get(
                fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("resource", Self.accounts), ("resource", Self.payments)]))
            #expect(both.status == 200)
            await #expect(throws: SignetError.self) { _ = try await provider.admin.updateClient(id: "backend", .init(resources: ["not a uri#frag"])) }
        }
    }
}
