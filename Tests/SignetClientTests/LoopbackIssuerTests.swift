import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTesting
import Testing

@Suite("One loopback rule: a provider on http://127.0.0.2 is development for the server and the SDK alike")
struct LoopbackIssuerTests {
    @Test("the provider listens on 127.0.0.2 over plain http, and the SDK discovers it and signs in through it")
    func secondLoopbackAddress() async throws {
        try await withTestProvider(configure: { $0.host = "127.0.0.2" }) { provider in
            #expect(provider.issuer.hasPrefix("http://127.0.0.2:"))
            try await seedApp(provider)
            let client = makeClient(provider)
            let document = try await client.discover()
            #expect(document.tokenEndpoint == provider.issuer + "/token")
            var step = try await client.nativeLogin().start(AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/callback"))
            step = try await step.select(scenario: .usernamePassword)
            step = try await step.submit(username: "erin", password: "erins passphrase")
            guard case .finished(let result) = step.kind else { Issue.record("expected finished, got \(step.kind)"); return }
            #expect(try await result.exchange().accessToken.isEmpty == false)
        }
    }

    @Test("a lookalike host is refused before any request: misuse, not a request over plain http")
    func lookalikeRefused() async throws {
        let client = SignetClient(
            configuration: .init(issuer: "http://127.0.0.1.evil.example", clientID: "app", redirectURI: "com.example.app:/callback"))
        await #expect {
            _ = try await client.discover()
        } throws: { ($0 as? SignetClientError)?.code == .misuse }
    }
}
