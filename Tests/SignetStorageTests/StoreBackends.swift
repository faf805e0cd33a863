import Foundation
import SignetServer
import SignetStorage
import SignetStore
import SignetTesting

/// The stores the contract runs against: in memory, an SQLite file, and a real PostgreSQL server.
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, sqlite, postgres

    var testDescription: String { rawValue }

    /// The PostgreSQL URL `.ci/run` exports (scripts/postgres-start).
    static var postgresURL: String? { ProcessInfo.processInfo.environment["SIGNET_TEST_POSTGRES_URL"] }

    /// The backends this machine can run: PostgreSQL only when a server was started.
    static var available: [StoreBackend] { postgresURL == nil ? [.memory, .sqlite] : allCases }

    /// A fresh, empty store of this kind, and how to dispose of it.
    func makeStore() async throws -> (any SignetStore, @Sendable () async throws -> Void) {
        switch self {
        case .memory:
            return (MemoryStore(), {})
        case .sqlite:
            let folder = try TestFolder.make("store")
            let store = try await SQLStore.sqlite(path: folder.appendingPathComponent("signet.sqlite").path)
            return (
                store,
                {
                    try await store.close()
                    try? FileManager.default.removeItem(at: folder)
                }
            )
        case .postgres:
            let store = try await SQLStore.postgres(url: Self.postgresURL!, schema: Self.freshSchema())
            return (store, { try await store.close() })
        }
    }

    /// A schema name no other test uses, so tests run in parallel on one database.
    static func freshSchema() -> String { "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16) }
}

import Testing

/// Runs `body` with a fresh store of `backend`, then disposes of it.
func withStore(_ backend: StoreBackend, _ body: (any SignetStore) async throws -> Void) async throws {
    let (store, dispose) = try await backend.makeStore()
    do {
        try await body(store)
        try await dispose()
    } catch {
        try? await dispose()
        throw error
    }
}
