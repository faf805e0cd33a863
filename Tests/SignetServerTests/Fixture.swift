import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting

/// The clients and user most tests need, registered in a test provider.
struct Fixture {
    let provider: TestProvider
    let backendKey: ClientKeyPair
    let basicSecret: String
    let postSecret: String
    let user: UserRecord
    static let password = "correct horse battery"
    static let appRedirect = "com.example.app:/callback"
    static let backendRedirect = "https://service.example.com/callback"

    static func make(_ provider: TestProvider) async throws -> Fixture {
        let admin = provider.admin
        _ = try await admin.addClient(
            .init(
                id: "app", name: "Example App", authMethod: .none, redirectURIs: [appRedirect, "http://127.0.0.1/callback"],
                postLogoutRedirectURIs: ["com.example.app:/signed-out"], nativeLogin: true))
        let key = ClientKeyPair()
        _ = try await admin.addClient(
            .init(
                id: "backend", name: "Example Service", authMethod: .privateKeyJWT, redirectURIs: [backendRedirect],
                postLogoutRedirectURIs: ["https://service.example.com/bye"], jwks: key.publicJWKS))
        let (_, basic) = try await admin.addClient(
            .init(id: "basic", name: "Basic Client", authMethod: .clientSecretBasic, redirectURIs: [backendRedirect]))
        let (_, post) = try await admin.addClient(
            .init(id: "post", name: "Post Client", authMethod: .clientSecretPost, redirectURIs: [backendRedirect]))
        let user = try await admin.addUser(
            username: "alice", password: password, name: "Alice Example", email: "alice@example.com", phoneNumber: "+4511111111")
        return Fixture(provider: provider, backendKey: key, basicSecret: basic!, postSecret: post!, user: user)
    }

    var appAuthorization: TestAuthorization { TestAuthorization(clientID: "app", redirectURI: Self.appRedirect) }
    var backendAuthorization: TestAuthorization { TestAuthorization(clientID: "backend", redirectURI: Self.backendRedirect) }

    /// A fresh, valid client assertion for the backend client.
    func assertion(audience: String? = nil, lifetime: TimeInterval = 60, jti: String = UUID().uuidString) throws -> [(String, String)] {
        TestJWS.assertionFields(
            try TestJWS.clientAssertion(
                backendKey, clientID: "backend", audience: audience ?? provider.url("/token"), now: provider.clock.now, lifetime: lifetime, jti: jti))
    }

    /// Alice signs in to the backend client: its authorization and the code, not yet redeemed.
    func backendCode(browser: ScriptedBrowser = ScriptedBrowser(), extra: [(String, String)] = []) async throws -> (TestAuthorization, String) {
        let authorization = backendAuthorization
        return (authorization, try await provider.signIn(authorization, browser: browser, username: "alice", password: Self.password, extra: extra))
    }

    /// Signs alice in for the backend and redeems the code with private_key_jwt.
    func backendTokens(browser: ScriptedBrowser = ScriptedBrowser(), extra: [(String, String)] = []) async throws -> (
        TestAuthorization, ScriptedResponse
    ) {
        let (authorization, code) = try await backendCode(browser: browser, extra: extra)
        return (authorization, try await provider.redeem(code, authorization, clientAuth: try assertion()))
    }
}
