import Foundation

/// Runs `body` with the path of an SQLite file (not yet created) in a fresh folder, and removes
/// the folder afterwards, however `body` ends.
func withTemporarySQLitePath<T>(_ label: String, _ body: (String) async throws -> T) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder.appendingPathComponent("signet.sqlite").path)
}
