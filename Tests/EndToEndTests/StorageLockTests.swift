import Foundation
import SignetCore
import SignetScript
import SignetServer
@testable import SignetStorage
import SignetTesting
import Testing

/// An SQLite store another process keeps locked past the write's patience is an outage, as a
/// PostgreSQL restart is: 503 with Retry-After, nothing done, and the same request works after.
@Suite("SQLite locked by another process: 503 with Retry-After, then the request works")
struct StorageLockTests {
    @Test(
        "a native login start while another connection holds the write lock for longer than the wait answers 503 temporarily_unavailable; after the release it starts"
    )
    func lockedStore() async throws {
        let folder = try TestFolder.make("locked")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("signet.sqlite").path
        let store = try await SQLStore.sqlite(path: path)
        try await withTestProvider(store: store) { provider in
            _ = try await provider.admin.addClient(
                .init(id: "app", name: "App", authMethod: .none, redirectURIs: ["com.example.app:/cb"], nativeLogin: true))
            let authorization = TestAuthorization(clientID: "app", redirectURI: "com.example.app:/cb")
            let body = String(
                decoding: try JSONSerialization.data(withJSONObject: Dictionary(uniqueKeysWithValues: authorization.parameters())), as: UTF8.self)
            func start() async throws -> ScriptedResponse {
                try await ScriptedBrowser().send(
                    "POST", provider.url("/login/native/start"), body: body, headers: [("Content-Type", "application/json")])
            }
            // Another process (here a second connection) takes the write lock and keeps it.
            let other = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
            _ = try other.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)
            let locked = try await start()
            _ = try other.run("ROLLBACK", binds: [], mayOpenTransaction: true)
            other.close()
            #expect(locked.status == 503, "\(locked.body)")
            #expect(locked.json["error"] as? String == "temporarily_unavailable")
            #expect(locked.header("Retry-After") != nil)
            let after = try await start()
            #expect(after.status == 201, "\(after.body)")
        }
        try await store.close()
    }
}
