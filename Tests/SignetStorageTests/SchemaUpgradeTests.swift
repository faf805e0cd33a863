import Foundation
import Logging
import SQLKit
import SignetCore
import SignetServer
@testable import SignetStorage
import Testing

/// Migration 9 rebuilds SQLite's replay keys WITHOUT ROWID: a store written by the schema before it
/// keeps every key and every rule, and the audit trail beside it is untouched.
@Suite("SQLite schema upgrade to version 9")
struct SchemaUpgradeTests {
    @Test("replay keys and audit events written at version 8 are all there after the upgrade, and a live key still refuses a replay")
    func upgradeKeepsRows() async throws {
        try await withTemporarySQLitePath("upgrade") { path in try await upgrade(path) }
    }

    private func upgrade(_ path: String) async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)

        // The schema and rows as version 8 wrote them.
        let old = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
        try await SchemaMigrations.run(on: old.migrationSession, lock: false, through: 8)
        let oldStore = SQLStore(database: old, isSQLite: true) { old.close() }
        for index in 0..<5 {
            try await oldStore.appendAuditEvent(
                AuditEventRecord(
                    id: "event-\(index)", at: start.addingTimeInterval(Double(index / 2)), kind: "token.issued", userID: "u1", clientID: "c1", actor: "client",
                    target: nil, reason: nil))
        }
        #expect(try await oldStore.recordOnce(key: "live", expiresAt: start.addingTimeInterval(600), now: start))
        #expect(try await oldStore.recordOnce(key: "expired", expiresAt: start.addingTimeInterval(10), now: start))
        let oldSchema = try await tableSQL(old)
        #expect(oldSchema["signet_replay"]?.contains("WITHOUT ROWID") == false)
        try await oldStore.close()

        let store = try await SQLStore.sqlite(path: path)
        let events = try await store.auditEvents(userID: "u1", limit: 10)
        // Newest first; the two events of one millisecond in the order they were written, reversed.
        #expect(events.map(\.id) == ["event-4", "event-3", "event-2", "event-1", "event-0"])
        #expect(try await store.auditEvents(AuditQuery(clientID: "c1", limit: 10)).count == 5)
        #expect(try await !store.recordOnce(key: "live", expiresAt: start.addingTimeInterval(600), now: start.addingTimeInterval(60)))
        #expect(try await store.recordOnce(key: "expired", expiresAt: start.addingTimeInterval(700), now: start.addingTimeInterval(60)))
        try await store.appendAuditEvent(
            AuditEventRecord(id: "event-5", at: start.addingTimeInterval(3), kind: "token.issued", userID: "u1", clientID: "c1", actor: "client", target: nil, reason: nil))
        #expect(try await store.auditEvents(userID: "u1", limit: 1).map(\.id) == ["event-5"])
        try await store.close()

        let reopened = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
        defer { reopened.close() }
        let schema = try await tableSQL(reopened)
        #expect(schema["signet_replay"]?.contains("WITHOUT ROWID") == true)
        #expect(schema["signet_audit_events"] == oldSchema["signet_audit_events"])
        #expect(schema["signet_replay_new"] == nil)
        let indexes = try await reopened.raw("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'signet_audit_events' AND sql IS NOT NULL").all()
            .map { try $0.decode(column: "name", as: String.self) }
        #expect(Set(indexes) == ["signet_audit_events_user", "signet_audit_events_client", "signet_audit_events_at"])
    }

    private func tableSQL(_ database: InlineSQLiteDatabase) async throws -> [String: String] {
        let rows = try await database.raw("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all()
        return try Dictionary(uniqueKeysWithValues: rows.map { (try $0.decode(column: "name", as: String.self), try $0.decode(column: "sql", as: String.self)) })
    }
}
