import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing

@Suite("jwks_uri fetches follow no redirect and are bounded in size and time")
struct JWKSFetchTests {
    let keyPair = ClientKeyPair()

    func client(_ uri: String) -> ClientRecord {
        ClientRecord(
            id: "remote", name: "Remote Keys", authMethod: .privateKeyJWT, redirectURIs: [Fixture.backendRedirect], jwksURI: uri, createdAt: Date())
    }

    /// The refusal `keySet` throws for `path`, and how long it took.
    func refusal(_ server: KeyServer, _ path: String, limits: FetchLimits) async throws -> (SignetError?, Duration) {
        let keys = RegisteredClientKeys(clock: .system, fetch: SafeFetch(limits: limits))
        let start = ContinuousClock.now
        var refused: SignetError?
        do {
            _ = try await keys.keySet(for: client(server.base + path), refresh: false)
        } catch let error as SignetError {
            refused = error
        }
        return (refused, ContinuousClock.now - start)
    }

    @Test("a 302 to a valid JWKS is refused and not followed; the JWKS itself is fetched")
    func redirect() async throws {
        try await KeyServer.with(jwks: keyPair.publicJWKS) { server in
            let (error, _) = try await refusal(server, "/redirect", limits: FetchLimits())
            #expect(error?.code == .fetchRefused)
            #expect(error?.reason.contains("redirect (302)") == true)
            #expect(server.hits("/redirect") == 1)
            #expect(server.hits("/jwks") == 0)

            let keys = try await RegisteredClientKeys(clock: .system).keySet(for: client(server.base + "/jwks"), refresh: false)
            #expect(keys.keys.first?.keyIdentifier?.string == keyPair.keyID)
        }
    }

    @Test("a failed fetch is remembered for 30 s and concurrent fetches of one URI share one request")
    func failuresRememberedAndShared() async throws {
        try await KeyServer.with(jwks: keyPair.publicJWKS) { server in
            let clock = TestClock()
            let keys = RegisteredClientKeys(clock: clock.signetClock, fetch: SafeFetch(limits: FetchLimits(timeout: 0.5)))
            for _ in 0..<5 {
                await #expect(throws: SignetError.self) { _ = try await keys.keySet(for: client(server.base + "/redirect"), refresh: false) }
            }
            #expect(server.hits("/redirect") == 1)
            clock.advance(by: 31)
            await #expect(throws: SignetError.self) { _ = try await keys.keySet(for: client(server.base + "/redirect"), refresh: false) }
            #expect(server.hits("/redirect") == 2)

            let hanging = client(server.base + "/hang")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { _ = try? await keys.keySet(for: hanging, refresh: false) } }
                try await group.waitForAll()
            }
            #expect(server.hits("/hang") == 1)
        }
    }

    @Test("a body over the limit is refused, streamed or announced, and reading stops at the limit")
    func oversized() async throws {
        try await KeyServer.with(jwks: keyPair.publicJWKS) { server in
            for path in ["/huge", "/huge-declared"] {
                let (error, _) = try await refusal(server, path, limits: FetchLimits())
                #expect(error?.code == .fetchRefused, "\(path)")
                #expect(error?.reason.contains("more than 65536 bytes") == true, "\(path)")
            }
            // The JWKS itself is far under the default; a limit below its size refuses it too.
            let (small, _) = try await refusal(server, "/jwks", limits: FetchLimits(maxBytes: 64))
            #expect(small?.code == .fetchRefused)
        }
    }

    @Test("a server that never answers, or stops halfway through the body, is cut off at the time limit")
    func slow() async throws {
        try await KeyServer.with(jwks: keyPair.publicJWKS) { server in
            for path in ["/hang", "/slow-body"] {
                let (error, elapsed) = try await refusal(server, path, limits: FetchLimits(timeout: 0.5))
                #expect(error?.code == .fetchRefused, "\(path)")
                #expect(error?.reason.contains("took longer than 0.5 seconds") == true, "\(path)")
                // The key server holds these requests until the test ends, so returning at all proves
                // the cut-off; no upper bound on the time, which a busy machine could exceed.
                #expect(elapsed >= .milliseconds(450), "\(path) took \(elapsed)")
            }
        }
    }

    @Test("at the token endpoint each refused fetch is invalid_client naming the reason; a well-behaved jwks_uri authenticates")
    func tokenEndpoint() async throws {
        try await KeyServer.with(jwks: keyPair.publicJWKS) { server in
            /// Posts a refresh with a client whose keys live at `path`.
            func attempt(_ provider: TestProvider, _ clientID: String, _ path: String) async throws -> ScriptedResponse {
                _ = try await provider.admin.addClient(
                    .init(
                        id: clientID, name: clientID, authMethod: .privateKeyJWT, redirectURIs: [Fixture.backendRedirect], jwksURI: server.base + path
                    ))
                let assertion = try TestJWS.clientAssertion(keyPair, clientID: clientID, audience: provider.issuer, now: provider.clock.now)
                return try await ScriptedBrowser().post(
                    provider.url("/token"),
                    form: [("grant_type", "refresh_token"), ("refresh_token", "unknown")] + TestJWS.assertionFields(assertion))
            }
            // A short timeout only where time is the point: a redirect or an oversized body is
            // refused for what it is, under the default timeout, so a busy machine cannot turn it
            // into a timeout. The held requests return only because they are cut off.
            let cases: [(path: String, reason: String, timeout: Double?)] = [
                ("/redirect", "redirect", nil), ("/huge", "more than 65536 bytes", nil),
                ("/hang", "took longer than 0.5 seconds", 0.5), ("/slow-body", "took longer than 0.5 seconds", 0.5),
            ]
            for (index, testCase) in cases.enumerated() {
                try await withTestProvider(configure: { if let timeout = testCase.timeout { $0.jwksFetch.timeout = timeout } }) { provider in
                    let response = try await attempt(provider, "remote-\(index)", testCase.path)
                    #expect(response.status == 401, "\(testCase.path)")
                    #expect(response.oauthError == "invalid_client", "\(testCase.path)")
                    #expect((response.json["error_description"] as? String)?.contains(testCase.reason) == true, "\(testCase.path): \(response.body)")
                }
            }
            try await withTestProvider { provider in
                // Authenticated: the refusal is about the refresh token, not the client.
                let response = try await attempt(provider, "remote-good", "/jwks")
                #expect(response.oauthError == "invalid_grant", "\(response.body)")
                #expect(server.hits("/jwks") == 1)
            }
        }
    }
}
