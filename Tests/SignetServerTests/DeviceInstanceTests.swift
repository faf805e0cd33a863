// Instance ids and logins that activate an installation (issue 8, steps 1 and 2).
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Devices: instance ids and the login that binds one")
struct DeviceInstanceTests {
    static let redirect = "com.example.wallet:/cb"

    /// A public app allowed the scope device, and alice.
    func seed(_ provider: TestProvider) async throws {
        var wallet = SignetAdmin.NewClient(id: "wallet", name: "Wallet", authMethod: .none, redirectURIs: [Self.redirect])
        wallet.apiScopes = ["device"]
        _ = try await provider.admin.addClient(wallet)
        _ = try await provider.admin.addClient(.init(id: "plain", name: "Plain", authMethod: .none, redirectURIs: [Self.redirect]))
        _ = try await provider.admin.addUser(username: "alice", password: Fixture.password, phoneNumber: "+4511111111")
    }

    func newInstance(_ provider: TestProvider, client: String = "wallet") async throws -> String {
        let answer = try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", client)])
        #expect(answer.status == 201, "\(answer.body)")
        return try #require(answer.json["instance_id"] as? String)
    }

    func idTokenClaims(_ response: ScriptedResponse) throws -> IDTokenClaims {
        let idToken = try #require(try response.decode(TokenResponse.self).idToken)
        return try #require(IDTokenClaims.unverified(idToken))
    }

    @Test("POST /devices/instances gives a fresh 43-character id that lives ten minutes")
    func create() async throws {
        try await withTestProvider { provider in
            try await seed(provider)
            let form = try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", "wallet")])
            #expect(form.status == 201)
            #expect(form.json["expires_in"] as? Int == 600)
            #expect(form.header("Cache-Control")?.contains("no-store") == true)
            let id = try #require(form.json["instance_id"] as? String)
            #expect(id.count == 43)
            let stored = try #require(try await provider.store.deviceInstance(id: id))
            #expect(stored.clientID == "wallet")
            #expect(stored.expiresAt == provider.clock.now.addingTimeInterval(600))
            let json = try await ScriptedBrowser().send(
                "POST", provider.url("/devices/instances"), body: #"{"client_id":"wallet"}"#, headers: [("Content-Type", "application/json")])
            #expect(json.oauthError == "invalid_request", "a form body, as at the OAuth endpoints")
            let again = try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", "wallet")])
            #expect(again.json["instance_id"] as? String != id)
        }
    }

    @Test("bad requests for an instance id: unknown client, a client without scope device, no client_id, repeated members, wrong method")
    func refusals() async throws {
        try await withTestProvider { provider in
            try await seed(provider)
            let url = provider.url("/devices/instances")
            let unknown = try await ScriptedBrowser().post(url, form: [("client_id", "nobody")])
            #expect(unknown.status == 401)
            #expect(unknown.oauthError == "invalid_client")
            let plain = try await ScriptedBrowser().post(url, form: [("client_id", "plain")])
            #expect(plain.status == 400)
            #expect(plain.oauthError == "unauthorized_client")
            #expect(try await ScriptedBrowser().post(url, form: []).oauthError == "invalid_request")
            #expect(try await ScriptedBrowser().post(url, form: [("client_id", "wallet"), ("client_id", "wallet")]).oauthError == "invalid_request")
            #expect(
                try await ScriptedBrowser().send(
                    "POST", url, body: #"{"client_id":"wallet","client_id":"plain"}"#, headers: [("Content-Type", "application/json")]
                ).oauthError == "invalid_request")
            #expect(
                try await ScriptedBrowser().send("POST", url, body: #"["wallet"]"#, headers: [("Content-Type", "application/json")]).oauthError
                    == "invalid_request")
            #expect(try await ScriptedBrowser().get(url).status == 405)
        }
    }

    @Test("an address gets 60 instance ids per ten minutes: 80 parallel requests create exactly 60, the rest get 429 with Retry-After")
    func perAddressLimit() async throws {
        try await withTestProvider { provider in
            try await seed(provider)
            let answers = try await withThrowingTaskGroup(of: ScriptedResponse.self) { group in
                for _ in 0..<80 {
                    group.addTask { try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", "wallet")]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == 201 }.count == 60)
            let refused = answers.filter { $0.status == 429 }
            #expect(refused.count == 20)
            #expect(refused.allSatisfy { $0.header("Retry-After").flatMap(Int.init) ?? 0 > 0 })
            provider.clock.advance(by: 601)
            #expect(try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", "wallet")]).status == 201)
        }
    }

    @Test("the budget counts unused ids, not activations: with 60 asked for, each activation gives one back; a refused activation does not")
    func activationGivesBack() async throws {
        try await withTestProvider { provider in
            try await seed(provider)
            var ids: [String] = []
            for _ in 0..<60 { ids.append(try await newInstance(provider)) }
            #expect(try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", "wallet")]).status == 429)
            let activation = DeviceActivationTests()
            let token = try await activation.deviceToken(provider, instance: ids[0])
            #expect(try await activation.activate(provider, token: token, body: "not a CSR").status == 400)
            #expect(
                try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", "wallet")]).status == 429,
                "a refused activation gives nothing back")
            #expect(try await activation.activate(provider, token: token, body: try DeviceActivationTests.csr()).status == 201)
            #expect(
                try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", "wallet")]).status == 201,
                "the activated id was given back")
            #expect(try await ScriptedBrowser().post(provider.url("/devices/instances"), form: [("client_id", "wallet")]).status == 429)
        }
    }

    @Test("a login with scope device and the instance id as nonce: the ID token and the grant carry instance_id")
    func bindByNonce() async throws {
        try await withTestProvider { provider in
            try await seed(provider)
            let instance = try await newInstance(provider)
            var authorization = TestAuthorization(clientID: "wallet", redirectURI: Self.redirect, scope: "openid device")
            authorization.nonce = instance
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let tokens = try await provider.redeem(code, authorization, clientAuth: [("client_id", "wallet")])
            let claims = try idTokenClaims(tokens)
            #expect(claims.instanceID == instance)
            #expect(claims.nonce == instance)
            let discovery = try await ScriptedBrowser().get(provider.url("/.well-known/openid-configuration"))
            #expect((discovery.json["claims_supported"] as? [String])?.contains("instance_id") == true)
            #expect(discovery.json["claims_parameter_supported"] as? Bool == true)
        }
    }

    @Test("a login with scope device asking for instance_id in the claims parameter (OIDC Core §5.5) binds that instance; the nonce stays the app's")
    func bindByClaims() async throws {
        try await withTestProvider { provider in
            try await seed(provider)
            let instance = try await newInstance(provider)
            let authorization = TestAuthorization(clientID: "wallet", redirectURI: Self.redirect, scope: "openid device")
            let claimsRequest = #"{"id_token":{"instance_id":{"essential":true,"value":"\#(instance)"}}}"#
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password, extra: [("claims", claimsRequest)])
            let claims = try idTokenClaims(try await provider.redeem(code, authorization, clientAuth: [("client_id", "wallet")]))
            #expect(claims.instanceID == instance)
            #expect(claims.nonce == authorization.nonce)
        }
    }

    @Test(
        "scope device is refused back to the client without an instance id, with an unknown, expired or another client's one, and with malformed claims"
    )
    func bindRefusals() async throws {
        try await withTestProvider { provider in
            try await seed(provider)
            var other = SignetAdmin.NewClient(id: "other", name: "Other", authMethod: .none, redirectURIs: [Self.redirect])
            other.apiScopes = ["device"]
            _ = try await provider.admin.addClient(other)
            let othersInstance = try await newInstance(provider, client: "other")
            let expired = try await newInstance(provider)
            provider.clock.advance(by: 601)

            func refusal(nonce: String? = nil, extra: [(String, String)] = []) async throws -> String? {
                var authorization = TestAuthorization(clientID: "wallet", redirectURI: Self.redirect, scope: "openid device")
                if let nonce { authorization.nonce = nonce }
                let response = try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer, extra: extra))
                #expect(response.status == 302)
                return response.locationParameters?["error"]
            }
            #expect(try await refusal() == "invalid_request", "a random nonce is no instance id")
            #expect(try await refusal(nonce: String(repeating: "A", count: 43)) == "invalid_request")
            #expect(try await refusal(nonce: expired) == "invalid_request")
            #expect(try await refusal(nonce: othersInstance) == "invalid_request")
            #expect(try await refusal(extra: [("claims", "{not json")]) == "invalid_request")
            #expect(try await refusal(extra: [("claims", #"{"id_token":{"instance_id":{"essential":true}}}"#)]) == "invalid_request")
            // Without scope device a nonce is just a nonce, and no instance is bound.
            let plain = TestAuthorization(clientID: "wallet", redirectURI: Self.redirect, scope: "openid")
            let code = try await provider.signIn(plain, username: "alice", password: Fixture.password)
            #expect(try idTokenClaims(try await provider.redeem(code, plain, clientAuth: [("client_id", "wallet")])).instanceID == nil)
        }
    }

    @Test(
        "the first user whose login binds an instance id keeps it: another user's login with it is refused, and a claims request without a value is legal"
    )
    func firstUserKeepsIt() async throws {
        try await withTestProvider { provider in
            try await seed(provider)
            _ = try await provider.admin.addUser(username: "mallory", password: "mallorys passphrase")
            let instance = try await newInstance(provider)
            var authorization = TestAuthorization(clientID: "wallet", redirectURI: Self.redirect, scope: "openid device")
            authorization.nonce = instance
            _ = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            #expect(try await provider.store.deviceInstance(id: instance)?.userID != nil)
            let mallory = try await provider.submitLogin(
                authorization, browser: ScriptedBrowser(), username: "mallory", password: "mallorys passphrase")
            #expect(mallory.status == 403, "\(mallory.body.prefix(200))")
            #expect(mallory.locationParameters?["code"] == nil)
            // Alice may log in with it again (a retry).
            _ = try await provider.signIn(authorization, username: "alice", password: Fixture.password)

            // OIDC Core §5.5.1: essential without a value is a legal request; without scope device it changes nothing.
            let plain = TestAuthorization(clientID: "plain", redirectURI: Self.redirect, scope: "openid")
            let code = try await provider.signIn(
                plain, username: "alice", password: Fixture.password, extra: [("claims", #"{"id_token":{"instance_id":{"essential":true}}}"#)])
            #expect(!code.isEmpty)
        }
    }
}
