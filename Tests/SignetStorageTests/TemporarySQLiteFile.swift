import Foundation
@testable import SignetStorage
import Testing

/// Runs `body` with the path of an SQLite file (not yet created) in a fresh folder, and removes
/// the folder afterwards, however `body` ends.
func withTemporarySQLitePath<T>(_ label: String, _ body: (String) async throws -> T) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder.appendingPathComponent("signet.sqlite").path)
}

/// Runs `body` with a migrated SQLite store on a temporary file, its database and the file's path,
/// and closes the store afterwards, however `body` ends.
func withTemporarySQLiteStore(_ label: String, _ body: (SQLStore, InlineSQLiteDatabase, String) async throws -> Void) async throws {
    try await withTemporarySQLitePath(label) { path in
        let store = try await SQLStore.sqlite(path: path)
        do {
            try await body(store, try #require(store.database as? InlineSQLiteDatabase), path)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }
}
