import Foundation
import Logging
import SQLKit
@testable import SignetStorage

/// SQLite stores at an older schema version, as an older build left them (for tests of upgrades).
enum SchemaMigrationFixture {
    /// Creates an SQLite store at `path` migrated only through `version`.
    static func makeStore(at path: String, version: Int) async throws {
        let database = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
        defer { database.close() }
        try await SchemaMigrations.run(on: database.migrationSession, lock: false, through: version)
    }

    /// The schema version of the SQLite store at `path`.
    static func version(at path: String) async throws -> Int? {
        let database = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
        defer { database.close() }
        return try await database.raw("SELECT max(version) AS v FROM signet_schema_migrations").first()?.decode(column: "v", as: Int?.self)
    }
}
