import Foundation
import SignetServer
@testable import SignetStorage
import SignetStore
import SignetTesting
import Testing

/// Runs `body` with the path of an SQLite file (not yet created) in a fresh folder, and removes
/// the folder afterwards, however `body` ends.
func withTemporarySQLitePath<T>(_ label: String, _ body: (String) async throws -> T) async throws -> T {
    try await TestFolder.with(label) { try await body($0.appendingPathComponent("signet.sqlite").path) }
}

/// Runs `body` with a migrated SQLite store on a temporary file, its database and the file's path,
/// and closes the store afterwards, however `body` ends. `synchronous` and `laterFlush` as for
/// `SQLStore.sqlite(path:synchronous:laterFlush:migrations:logger:)`.
func withTemporarySQLiteStore(
    _ label: String, synchronous: SQLStore.Synchronous = .full, laterFlush: Duration = InlineSQLiteDatabase.laterFlush,
    _ body: (SQLStore, InlineSQLiteDatabase, String) async throws -> Void
) async throws {
    try await withTemporarySQLitePath(label) { path in
        let store = try await SQLStore.sqlite(path: path, synchronous: synchronous, laterFlush: laterFlush)
        do {
            try await body(store, try #require(store.sqlite), path)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }
}

/// A public client with one redirect URI, named by its id, for tests that only need a row.
func sampleClient(_ id: String) -> ClientRecord {
    ClientRecord(id: id, name: id, authMethod: .none, redirectURIs: ["com.example.app:/cb"], createdAt: Date())
}

/// The first column of `query`'s rows in the file at `path`, as text, read through a connection
/// of its own, as another process would read it.
func textColumn(of query: String, inFile path: String) throws -> [String] {
    let connection = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
    defer { connection.close() }
    return try connection.run(query, binds: []).rows.compactMap {
        guard case .text(let value) = $0.first else { return nil }
        return value
    }
}
