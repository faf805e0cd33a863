// API scopes registered per client (clients add|update --scope).
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("API scopes: registered per client, asked for like OpenID scopes")
struct APIScopeTests {
    @Test("a client registered with an API scope gets it in its access token; a client without it gets invalid_scope")
    func grantedOnlyToItsClient() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            var bank = SignetAdmin.NewClient(id: "bank", name: "Bank", authMethod: .none, redirectURIs: ["com.example.bank:/cb"])
            bank.apiScopes = ["accounts", "payments:write"]
            _ = try await provider.admin.addClient(bank)

            let authorization = TestAuthorization(clientID: "bank", redirectURI: "com.example.bank:/cb", scope: "openid accounts")
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let tokens = try await provider.redeem(code, authorization, clientAuth: [("client_id", "bank")]).decode(TokenResponse.self)
            #expect(tokens.scope == "openid accounts")
            let payload = try #require(tokens.accessToken.split(separator: ".").dropFirst().first.flatMap { Data(base64URLEncoded: String($0)) })
            #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: payload).scope == "openid accounts")

            let other = TestAuthorization(clientID: "app", redirectURI: Fixture.appRedirect, scope: "openid accounts")
            let refused = try await ScriptedBrowser().get(other.url(issuer: provider.issuer))
            #expect(refused.locationParameters?["error"] == "invalid_scope")
            _ = fixture
        }
    }

    @Test(
        "registration refuses scope-tokens RFC 6749 §3.3 does not allow and OpenID scope names; update replaces the API scopes and keeps the OpenID ones"
    )
    func registration() async throws {
        try await withTestProvider { provider in
            for bad in ["two words", "quo\"te", "back\\slash", "", String(repeating: "a", count: 65), "openid", "tab\tbed"] {
                var client = SignetAdmin.NewClient(id: "c\(bad.hashValue)", name: "C", authMethod: .none, redirectURIs: ["com.example.c:/cb"])
                client.apiScopes = [bad]
                await #expect(throws: SignetError.self, "\(bad)") { _ = try await provider.admin.addClient(client) }
            }
            var client = SignetAdmin.NewClient(id: "c", name: "C", authMethod: .none, redirectURIs: ["com.example.c:/cb"])
            client.apiScopes = ["accounts"]
            _ = try await provider.admin.addClient(client)
            let updated = try await provider.admin.updateClient(id: "c", .init(apiScopes: ["payments"]))
            #expect(updated.allowedScopes == AuthorizationRequestValidator.supportedScopes + ["payments"])
            await #expect(throws: SignetError.self) {
                try await provider.admin.updateClient(id: "c", .init(name: "Renamed", apiScopes: ["bad scope"]))
            }
            #expect(try await provider.store.client(id: "c")?.name == "C")
        }
    }
}
