import Foundation
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer
import SignetStorage
import SignetTesting
import Testing

/// The stores the end-to-end flow runs on: SQLite always, PostgreSQL when a server was started.
enum EndToEndStore: String, CaseIterable, Sendable {
    case sqlite, postgres

    static var postgresURL: String? { ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES_URL"] }
    static var available: [EndToEndStore] { postgresURL == nil ? [.sqlite] : allCases }

    func open() async throws -> SQLStore { try await open(database: newDatabase()) }

    /// A name for a fresh database: a file path (SQLite) or a schema (PostgreSQL).
    func newDatabase() throws -> String {
        switch self {
        case .sqlite:
            return try TestFolder.make("e2e").appendingPathComponent("signet.sqlite").path
        case .postgres:
            return "e2e_" + UUID().uuidString.prefix(8).lowercased()
        }
    }

    /// A store on `database` (from ``newDatabase()``); opened twice, two stores share it as two instances would.
    func open(database: String) async throws -> SQLStore {
        switch self {
        case .sqlite: try await SQLStore.sqlite(path: database)
        case .postgres: try await SQLStore.postgres(url: Self.postgresURL!, schema: database)
        }
    }
}

@Suite("End to end: the relying-party kit against the provider over real HTTP")
struct RelyingPartyFlowTests {
    @Test(
        "a backend with private_key_jwt runs the whole flow: authorize, login, code, tokens, ID token, userinfo, refresh, revoke, logout",
        arguments: EndToEndStore.available)
    func wholeFlow(_ kind: EndToEndStore) async throws {
        let store = try await kind.open()
        defer { Task { try? await store.close() } }
        try await withTestProvider(store: store) { provider in
            let key = ClientKeyPair()
            _ = try await provider.admin.addClient(
                .init(
                    id: "service", name: "Service", authMethod: .privateKeyJWT, redirectURIs: ["com.example.service:/cb"],
                    postLogoutRedirectURIs: ["com.example.service:/bye"], jwks: key.publicJWKS))
            let user = try await provider.admin.addUser(username: "bob", password: "a long passphrase", name: "Bob")
            let clock = provider.clock
            let backend = RelyingParty(
                configuration: RelyingPartyConfiguration(
                    issuer: provider.issuer, clientID: "service", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID)),
                now: { clock.now })

            let request = try await backend.makeAuthorizationRequest(redirectURI: "com.example.service:/cb", scope: "openid profile", maxAge: 300)
            let browser = ScriptedBrowser()
            let page = try await browser.get(request.url.absoluteString)
            let fields = try #require(LoginForm.fields(in: page.body))
            let login = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "bob"), ("password", "a long passphrase"),
                ])
            let redirect = try #require(login.header("Location").flatMap(URL.init(string:)))

            let completed = try await backend.completeAuthorization(redirect: redirect, pending: request.pending)
            #expect(completed.idToken.sub == user.id)
            #expect(completed.idToken.amr == ["pwd"])
            let info = try await backend.userInfo(accessToken: completed.tokens.accessToken, expectedSubject: user.id)
            #expect(info.sub == user.id)

            let refreshed = try await backend.refresh(try #require(completed.tokens.refreshToken))
            let idToken = try #require(refreshed.idToken)
            let revalidated = try await backend.validateIDToken(
                idToken, expectation: IDTokenExpectation(issuer: provider.issuer, clientID: "service", nonce: nil))
            #expect(revalidated.claims?.sub == user.id)

            try await backend.revoke(try #require(refreshed.refreshToken))
            await #expect(throws: SignetError(.oauth, "")) { try await backend.refresh(refreshed.refreshToken!) }

            let logout = try await browser.get(
                try await backend.endSessionURL(idTokenHint: completed.tokens.idToken, postLogoutRedirectURI: "com.example.service:/bye", state: "s")
                    .absoluteString)
            #expect(logout.header("Location") == "com.example.service:/bye?state=s")
        }
    }

    @Test(
        "two provider instances sharing one PostgreSQL honour each other's codes, sessions and single use",
        .enabled(if: EndToEndStore.postgresURL != nil))
    func twoInstances() async throws {
        let url = try #require(EndToEndStore.postgresURL)
        let schema = "multi_" + UUID().uuidString.prefix(8).lowercased()
        let storeA = try await SQLStore.postgres(url: url, schema: schema)
        let storeB = try await SQLStore.postgres(url: url, schema: schema)
        defer {
            Task {
                try? await storeA.close(); try? await storeB.close()
            }
        }
        let clock = TestClock()
        try await withTestProvider(store: storeA, clock: clock) { a in
            try await withTestProvider(store: storeB, clock: clock) { b in
                _ = try await a.admin.addClient(.init(id: "app", name: "App", authMethod: .none, redirectURIs: ["com.example.app:/cb"]))
                _ = try await a.admin.addUser(username: "carol", password: "another passphrase")
                // The login page is served by A, the form is posted to B.
                let authorization = TestAuthorization(clientID: "app", redirectURI: "com.example.app:/cb")
                let browser = ScriptedBrowser()
                let page = try await browser.get(authorization.url(issuer: a.issuer))
                let fields = try #require(LoginForm.fields(in: page.body))
                let login = try await browser.post(
                    b.url("/login"),
                    form: [
                        ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "carol"),
                        ("password", "another passphrase"),
                    ])
                let code = try #require(login.locationParameters?["code"])
                // 50 concurrent redemptions split over both instances: exactly one wins.
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<50 {
                        let target = index % 2 == 0 ? a : b
                        group.addTask { try await target.redeem(code, authorization, clientAuth: [("client_id", "app")]).status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 200 }.count == 1)
                #expect(statuses.filter { $0 == 400 }.count == 49)
            }
        }
    }
}
