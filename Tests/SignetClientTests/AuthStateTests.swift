import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTesting
import Testing

@Suite("AuthState: one refresh for many callers, changes in order, storage across launches")
struct AuthStateTests {
    @Test("changes emits signed in, refreshed, signed out, in that order, to every subscriber")
    func changesInOrder() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let client = TestApp.client(provider, dpop: MemoryDPoPKeyStore())
            let state = try await AuthState(client: client, storage: MemoryAuthStateStorage())
            let first = state.changes, second = state.changes
            let signedIn = try await state.signIn(agent: TestApp.agent(provider))
            provider.clock.advance(by: 590)
            let refreshed = try await state.validTokens()
            #expect(refreshed != signedIn)
            #expect(refreshed.isDPoPBound)
            #expect(refreshed.idTokenClaims?.sub == signedIn.idTokenClaims?.sub)
            try await state.signOut()
            for stream in [first, second] {
                var iterator = stream.makeAsyncIterator()
                #expect(await iterator.next() == .signedIn(signedIn))
                #expect(await iterator.next() == .refreshed(refreshed))
                #expect(await iterator.next() == .signedOut)
            }
        }
    }

    @Test("20 parallel token reads of an expiring token make one refresh and all get its token")
    func singleFlightRefresh() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport, dpop: MemoryDPoPKeyStore())
            let state = try await AuthState(client: client, storage: MemoryAuthStateStorage())
            let signedIn = try await state.signIn(agent: TestApp.agent(provider))
            #expect(try await state.freshAccessToken() == signedIn.accessToken, "still valid: no refresh")
            provider.clock.advance(by: 590)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 { group.addTask { try await state.freshAccessToken() } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(tokens.count == 20)
            #expect(Set(tokens).count == 1)
            #expect(!tokens.contains(signedIn.accessToken))
            let refreshes = transport.requests(to: "/token").filter { RecordingTransport.form($0)["grant_type"] == "refresh_token" }
            #expect(refreshes.count == 1)
        }
    }

    @Test("the grant revoked elsewhere: the next refresh signs out with not_signed_in and announces it")
    func grantGone() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let client = TestApp.client(provider)
            let state = try await AuthState(client: client, storage: MemoryAuthStateStorage())
            let tokens = try await state.signIn(agent: TestApp.agent(provider))
            try await client.revoke(try #require(tokens.tokens.refreshToken))
            let changes = state.changes
            provider.clock.advance(by: 590)
            do {
                _ = try await state.validTokens()
                Issue.record("a revoked grant must not refresh")
            } catch let error as SignetClientError {
                #expect(error.code == .notSignedIn)
                #expect(error.serverError?.error == .invalidGrant)
                #expect(error.underlying is SignetClientError)
            }
            #expect(await state.isSignedIn == false)
            var iterator = changes.makeAsyncIterator()
            #expect(await iterator.next() == .signedOut)
        }
    }

    @Test("tokens and ID-token claims survive a relaunch through the storage; the version 1 format still reads; a newer one is refused")
    func storage() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let client = TestApp.client(provider)
            let file = try TestFolder.make("tokens", create: false).appendingPathExtension("json")
            defer { try? FileManager.default.removeItem(at: file) }
            let state = try await AuthState(client: client, storage: FileAuthStateStorage(file: file))
            let tokens = try await state.signIn(agent: TestApp.agent(provider))
            let reloaded = try await AuthState(client: client, storage: FileAuthStateStorage(file: file))
            #expect(await reloaded.tokens == tokens)
            #expect(await reloaded.tokens?.idTokenClaims?.sub == tokens.idTokenClaims?.sub)

            let stored = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            #expect(stored["version"] as? Int == 2)
            var v1 = stored
            v1["version"] = nil
            v1["idTokenClaims"] = nil
            try JSONSerialization.data(withJSONObject: v1).write(to: file)
            let old = try #require(try FileAuthStateStorage(file: file).load())
            #expect(old.tokens == tokens.tokens)
            #expect(old.idTokenClaims == nil)
            var v9 = stored
            v9["version"] = 9
            try JSONSerialization.data(withJSONObject: v9).write(to: file)
            await #expect(throws: SignetClientError.self) { _ = try await AuthState(client: client, storage: FileAuthStateStorage(file: file)) }
        }
    }

    @Test("tokens never print: AuthTokens and TokenResponse show ****")
    func redacted() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let tokens = try await TestApp.client(provider).signIn(agent: TestApp.agent(provider))
            for text in [
                String(describing: tokens), String(reflecting: tokens), String(describing: tokens.tokens), String(reflecting: tokens.tokens),
            ] {
                #expect(!text.contains(tokens.accessToken))
                #expect(!text.contains(try #require(tokens.tokens.refreshToken)))
                #expect(!text.contains(try #require(tokens.tokens.idToken)))
                #expect(text.contains("****"))
            }
            var dumped = ""
            dump(tokens, to: &dumped)
            #expect(!dumped.contains(tokens.accessToken))
        }
    }
}
