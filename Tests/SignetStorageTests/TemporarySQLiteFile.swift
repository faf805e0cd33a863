import Foundation
@testable import SignetStorage
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
