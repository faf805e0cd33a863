import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStorage
import SignetStore
import SignetTesting
import Testing

/// U+0000 in a request is refused at the edge with each endpoint's own 4xx on every store
/// (PostgreSQL text cannot hold it, so it once answered 500 there), and nothing changes.
@Suite("The NUL character in a request")
struct NULCharacterTests {
    @Test(
        "a client_id, username, scenario, path or Basic credential holding NUL gets the endpoint's 4xx, and the store is untouched",
        arguments: EndToEndStore.available)
    func refusedAtTheEdge(_ kind: EndToEndStore) async throws {
        let store = try await kind.open()
        defer { Task { try? await store.close() } }
        try await withTestProvider(store: store) { provider in
            _ = try await provider.admin.addClient(
                .init(id: "app", name: "App", authMethod: .none, redirectURIs: ["com.example.app:/cb"], nativeLogin: true))
            _ = try await provider.admin.addUser(username: "alice", password: "a long passphrase")
            let before = try await store.listClients()
            let browser = ScriptedBrowser()

            // /token: an OAuth error, JSON.
            let token = try await browser.post(
                provider.url("/token"), form: [("grant_type", "authorization_code"), ("code", "x"), ("client_id", "app\u{0}")])
            #expect(token.status == 400)
            #expect(token.oauthError == "invalid_request")
            let basic = Data("app%00:secret".utf8).base64EncodedString()
            let basicAnswer = try await browser.post(
                provider.url("/token"), form: [("grant_type", "authorization_code"), ("code", "x")], headers: [("Authorization", "Basic \(basic)")])
            #expect(basicAnswer.status == 401)
            #expect(basicAnswer.oauthError == "invalid_client")
            let rawBasic = Data("app\u{0}:secret".utf8).base64EncodedString()
            #expect(
                try await browser.post(
                    provider.url("/token"), form: [("grant_type", "authorization_code"), ("code", "x")],
                    headers: [("Authorization", "Basic \(rawBasic)")]
                ).status == 401)

            // /authorize: the error page (no redirect to an unvouched URI).
            let authorization = TestAuthorization(clientID: "app\u{0}", redirectURI: "com.example.app:/cb")
            let page = try await browser.get(authorization.url(issuer: provider.issuer))
            #expect(page.status == 400)
            #expect(page.header("Location") == nil)

            // The hosted login form.
            let real = TestAuthorization(clientID: "app", redirectURI: "com.example.app:/cb")
            let form = try await browser.get(real.url(issuer: provider.issuer))
            let fields = try #require(LoginForm.fields(in: form.body))
            let login = try await browser.post(
                provider.url("/login"),
                form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "alice\u{0}"), ("password", "x")])
            #expect(login.status == 400)

            // The native login API: its own JSON error.
            let native = try await browser.send(
                "POST", provider.url("/login/native/start"), body: #"{"client_id":"app\u0000","redirect_uri":"com.example.app:/cb"}"#,
                headers: [("Content-Type", "application/json")])
            #expect(native.status == 400)
            #expect(native.json["error"] as? String == "invalid_request")
            #expect((native.json["error_description"] as? String)?.contains("NUL") == true)
            let scenario = try await browser.send(
                "POST", provider.url("/login/native/scenario"), body: #"{"login_session":"s","scenario":"password\u0000"}"#,
                headers: [("Content-Type", "application/json")])
            #expect(scenario.status == 400)

            // A path parameter.
            let device = try await browser.send("DELETE", provider.url("/devices/abc%00def"), body: nil, headers: [("Authorization", "Bearer x")])
            #expect(device.status == 400)
            #expect(device.oauthError == "invalid_request")
            let facets = try await browser.get(provider.url("/uaf/facets/app%00"))
            #expect(facets.status == 400)

            // A text that merely names the escape is not NUL.
            let named = try await browser.post(
                provider.url("/token"),
                form: [
                    ("grant_type", "authorization_code"), ("code", #"\u0000"#), ("client_id", "app"), ("redirect_uri", "com.example.app:/cb"),
                    ("code_verifier", PKCE.makeVerifier()),
                ])
            #expect(named.oauthError == "invalid_grant", "\(named.body)")
            #expect(try await store.listClients() == before)
        }
    }
}
