import Foundation
import Logging
import SQLKit
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetStore
import SignetTesting
import Testing

/// Migration 9 rebuilds SQLite's replay keys WITHOUT ROWID, migration 10 the audit trail without
/// AUTOINCREMENT and without an index on the event id, and migration 11 moves password checks'
/// throttle slots into rows of their own: a store written by the schema before them keeps every
/// key, every event, every failure count and every rule.
@Suite("SQLite schema upgrades to versions 9, 10 and 11")
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
        let oldStore = SQLStore(database: old) { old.close() }
        for index in 0..<5 {
            try await oldStore.appendAuditEvent(
                AuditEventRecord(
                    id: "event-\(index)", at: start.addingTimeInterval(Double(index / 2)), kind: "token.issued", userID: "u1", clientID: "c1",
                    actor: "client",
                    target: nil, reason: nil))
        }
        #expect(try await oldStore.recordOnce(key: "live", expiresAt: start.addingTimeInterval(600), now: start))
        #expect(try await oldStore.recordOnce(key: "expired", expiresAt: start.addingTimeInterval(10), now: start))
        let oldSchema = try await tableSQL(old)
        #expect(oldSchema["signet_replay"]?.contains("WITHOUT ROWID") == false)
        // Migration 9 itself leaves the audit trail as it was (migration 10 rebuilds it).
        try await SchemaMigrations.run(on: old.migrationSession, lock: false, through: 9)
        #expect(try await tableSQL(old)["signet_audit_events"] == oldSchema["signet_audit_events"])
        try await oldStore.close()

        let store = try await SQLStore.sqlite(path: path)
        let events = try await store.auditEvents(userID: "u1", limit: 10)
        // Newest first; the two events of one millisecond in the order they were written, reversed.
        #expect(events.map(\.id) == ["event-4", "event-3", "event-2", "event-1", "event-0"])
        #expect(try await store.auditEvents(AuditQuery(clientID: "c1", limit: 10)).count == 5)
        #expect(try await !store.recordOnce(key: "live", expiresAt: start.addingTimeInterval(600), now: start.addingTimeInterval(60)))
        #expect(try await store.recordOnce(key: "expired", expiresAt: start.addingTimeInterval(700), now: start.addingTimeInterval(60)))
        try await store.appendAuditEvent(
            AuditEventRecord(
                id: "event-5", at: start.addingTimeInterval(3), kind: "token.issued", userID: "u1", clientID: "c1", actor: "client", target: nil,
                reason: nil))
        #expect(try await store.auditEvents(userID: "u1", limit: 1).map(\.id) == ["event-5"])
        try await store.close()

        let reopened = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
        defer { reopened.close() }
        let schema = try await tableSQL(reopened)
        #expect(schema["signet_replay"]?.contains("WITHOUT ROWID") == true)
        #expect(schema["signet_replay_new"] == nil)
    }

    @Test(
        "audit events written at version 9 keep their order after migration 10 rebuilds the table without AUTOINCREMENT and the id index; later events come after them"
    )
    func auditRebuildKeepsEvents() async throws {
        try await withTemporarySQLitePath("audit-rebuild") { path in try await rebuildAudit(path) }
    }

    private func rebuildAudit(_ path: String) async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func event(_ index: Int, user: String = "u1", client: String = "c1") -> AuditEventRecord {
            // Two events per second: the pairs share their time, and only `seq` orders them.
            AuditEventRecord(
                id: "event-\(index)", at: start.addingTimeInterval(Double(index / 2)), kind: "token.issued", userID: user, clientID: client,
                actor: "client",
                target: nil, reason: nil)
        }
        let old = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
        try await SchemaMigrations.run(on: old.migrationSession, lock: false, through: 9)
        let oldStore = SQLStore(database: old) { old.close() }
        for index in 0..<8 { try await oldStore.appendAuditEvent(event(index, user: index % 2 == 0 ? "u1" : "u2")) }
        // The newest events deleted by hand: the rebuilt table may hand their numbers out again
        // (nothing refers to them), but a new event always numbers after every kept one.
        try await old.raw("DELETE FROM signet_audit_events WHERE id IN ('event-6', 'event-7')").run()
        let oldSeqs = try await seqs(old)
        #expect(try await tableSQL(old)["signet_audit_events"]?.contains("AUTOINCREMENT") == true)
        try await oldStore.close()

        let store = try await SQLStore.sqlite(path: path)
        #expect(try await store.auditEvents(userID: "u1", limit: 10).map(\.id) == ["event-4", "event-2", "event-0"])
        #expect(
            try await store.auditEvents(AuditQuery(clientID: "c1", limit: 10)).map(\.id) == [
                "event-5", "event-4", "event-3", "event-2", "event-1", "event-0",
            ])
        #expect(try await store.auditEvents(AuditQuery(since: start.addingTimeInterval(2), limit: 10)).map(\.id) == ["event-5", "event-4"])
        // A new event in the same second as the newest kept ones still lists first.
        try await store.appendAuditEvent(event(5, user: "u1"))
        #expect(try await store.auditEvents(userID: "u1", limit: 2).map(\.id) == ["event-5", "event-4"])
        #expect(try await store.purgeAuditEvents(before: start.addingTimeInterval(1)) == 2)
        #expect(try await store.auditEvents(AuditQuery(limit: 10)).map(\.id) == ["event-5", "event-5", "event-4", "event-3", "event-2"])
        try await store.close()

        let reopened = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
        defer { reopened.close() }
        let table = try #require(try await tableSQL(reopened)["signet_audit_events"])
        #expect(!table.contains("AUTOINCREMENT"))
        #expect(!table.contains("UNIQUE"))
        #expect(try await tableSQL(reopened)["signet_audit_events_new"] == nil)
        let newSeqs = try await seqs(reopened)
        // The kept events keep their numbers; the new one comes after them.
        #expect(Array(newSeqs.dropLast()) == oldSeqs.filter { $0 >= 3 })
        #expect(newSeqs.last.map { $0 > oldSeqs.max()! } == true)
        let indexes = try await reopened.raw("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'signet_audit_events'").all()
            .map { try $0.decode(column: "name", as: String.self) }
        #expect(Set(indexes) == ["signet_audit_events_user", "signet_audit_events_client", "signet_audit_events_at"])
        let counters = try await reopened.raw("SELECT count(*) AS n FROM sqlite_sequence WHERE name = 'signet_audit_events'").all()
        #expect(try counters.first?.decode(column: "n", as: Int.self) == 0)
    }

    @Test("a backup made at version 9 is restored migrated, and the restored file alone, without a log beside it, holds the rebuilt audit trail")
    func restoreOfAnOlderBackup() async throws {
        try await withTemporarySQLitePath("restore-source") { source in
            try await withTemporarySQLitePath("restore-destination") { destination in
                let old = try InlineSQLiteDatabase(path: source, waitsForDisk: true, logger: Logger(label: "test"))
                try await SchemaMigrations.run(on: old.migrationSession, lock: false, through: 9)
                let oldStore = SQLStore(database: old) { old.close() }
                for index in 0..<50 {
                    try await oldStore.appendAuditEvent(
                        AuditEventRecord(
                            id: "event-\(index)", at: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)), kind: "token.issued", userID: "u1",
                            clientID: "c1", actor: "client", target: nil, reason: nil))
                }
                try await oldStore.close()

                try await SQLStore.restore(from: source, to: destination)
                #expect(!FileManager.default.fileExists(atPath: destination + "-wal"))
                #expect(!FileManager.default.fileExists(atPath: destination + ".restoring"))
                // Opened without migrating: the file itself is at version 10.
                let restored = try InlineSQLiteDatabase(path: destination, waitsForDisk: true, logger: Logger(label: "test"))
                defer { restored.close() }
                let version = try await restored.raw("SELECT max(version) AS v FROM signet_schema_migrations").first()?.decode(
                    column: "v", as: Int.self)
                #expect(version == SchemaMigrations.all.count)
                #expect(try await tableSQL(restored)["signet_audit_events"]?.contains("AUTOINCREMENT") == false)
                #expect(try await seqs(restored) == Array(1...50))
            }
        }
    }

    @Test(
        "of two restores into one folder at once, one puts its backup in place whole and the other is refused; the restored store is one backup, not a mix"
    )
    func concurrentRestores() async throws {
        try await withTemporarySQLitePath("restore-first") { first in
            try await withTemporarySQLitePath("restore-second") { second in
                try await withTemporarySQLitePath("restore-target") { destination in
                    for (path, client) in [(first, "first"), (second, "second")] {
                        let store = try await SQLStore.sqlite(path: path)
                        for index in 0..<200 {
                            try await store.insertClient(
                                ClientRecord(
                                    id: "\(client)-\(index)", name: client, authMethod: .none, redirectURIs: ["com.example.app:/cb"],
                                    createdAt: Date()))
                        }
                        try await store.close()
                    }
                    let outcomes = await withTaskGroup(of: String?.self) { group in
                        for source in [first, second] {
                            group.addTask {
                                do {
                                    try await SQLStore.restore(from: source, to: destination)
                                    return nil
                                } catch {
                                    return (error as? SignetError)?.reason ?? "\(error)"
                                }
                            }
                        }
                        return await group.reduce(into: [String?]()) { $0.append($1) }
                    }
                    #expect(outcomes.filter { $0 == nil }.count == 1, "exactly one restore is made: \(outcomes)")
                    let refusal = try #require(outcomes.compactMap { $0 }.first)
                    #expect(refusal.contains("another restore") || refusal.contains("exists"))
                    #expect(!FileManager.default.fileExists(atPath: destination + ".restoring"))
                    let restored = try await SQLStore.sqlite(path: destination, migrations: .requireCurrent)
                    let clients = try await restored.listClients()
                    try await restored.close()
                    #expect(Set(clients.map(\.name)).count == 1, "one backup's clients, not a mix")
                    #expect(clients.count == 200)
                }
            }
        }
    }

    @Test("a restore into a folder that is not there says so, and does not blame the backup")
    func restoreIntoMissingFolder() async throws {
        try await withTemporarySQLitePath("restore-backup") { source in
            let store = try await SQLStore.sqlite(path: source)
            try await store.close()
            let destination = try TestFolder.make("missing", create: false).appendingPathComponent("signet.sqlite").path
            let error = await #expect(throws: SignetError.self) { try await SQLStore.restore(from: source, to: destination) }
            #expect(error?.reason.contains("does it exist") == true, "\(String(describing: error))")
            #expect(error?.reason.contains("not a Signet SQLite store") == false)
        }
    }

    @Test(
        "opened to refuse another schema version, a store at version 9 (or a newer one) is refused and left as it is; opened as it is, it is left at 9; a new store gets the whole schema either way"
    )
    func migrationPolicies() async throws {
        try await withTemporarySQLitePath("policy") { path in
            let old = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
            try await SchemaMigrations.run(on: old.migrationSession, lock: false, through: 9)
            old.close()

            let error = await #expect(throws: SignetError.self) { _ = try await SQLStore.sqlite(path: path, migrations: .requireCurrent) }
            #expect(error?.reason.contains("schema version 9") == true)
            #expect(error?.reason.contains("signet serve") == true)
            #expect(try await version(path) == 9)

            let asItIs = try await SQLStore.sqlite(path: path, migrations: .asItIs)
            #expect(try await asItIs.listClients().isEmpty)
            try await asItIs.close()
            #expect(try await version(path) == 9)

            try await SQLStore.sqlite(path: path, migrations: .upgrade).close()
            #expect(try await version(path) == SchemaMigrations.all.count)
            try await SQLStore.sqlite(path: path, migrations: .requireCurrent).close()

            // A store a newer build upgraded is refused too.
            let newer = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
            try await newer.migrationSession.raw("INSERT INTO signet_schema_migrations (version) VALUES (\(bind: SchemaMigrations.all.count + 1))")
                .run()
            newer.close()
            let refusal = await #expect(throws: SignetError.self) { _ = try await SQLStore.sqlite(path: path, migrations: .requireCurrent) }
            #expect(refusal?.reason.contains("newer than this build's") == true)
        }
        for policy in [SQLStore.MigrationPolicy.requireCurrent, .asItIs] {
            try await withTemporarySQLitePath("policy-new") { path in
                try await SQLStore.sqlite(path: path, migrations: policy).close()
                #expect(try await version(path) == SchemaMigrations.all.count)
            }
        }
    }

    @Test("migration 11 drops the old checks-in-flight counters, keeps the failure counts, and slots work after it")
    func throttleSlotsUpgrade() async throws {
        try await withTemporarySQLitePath("upgrade-slots") { path in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let old = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
            try await SchemaMigrations.run(on: old.migrationSession, lock: false, through: 10)
            let oldStore = SQLStore(database: old) { old.close() }
            for key in ["address-checking:10.0.0.1", "account-checking:abc", "address:10.0.0.1", "account:abc"] {
                _ = try await oldStore.recordFailure(key: key, at: now, resetBefore: now.addingTimeInterval(-60))
            }
            try await oldStore.close()

            let store = try await SQLStore.sqlite(path: path)
            #expect(try await store.throttle(key: "address-checking:10.0.0.1") == nil)
            #expect(try await store.throttle(key: "account-checking:abc") == nil)
            #expect(try await store.throttle(key: "address:10.0.0.1")?.failures == 1)
            let view = try await store.takeSlot(
                ThrottleSlot(key: "account-checking:abc", id: "1"), expiresAt: now.addingTimeInterval(60), now: now, failuresKey: "account:abc")
            #expect(view.liveSlots == 1)
            #expect(view.failures?.failures == 1)
            try await store.close()
            #expect(try await version(path) == SchemaMigrations.all.count)
        }
    }

    private func version(_ path: String) async throws -> Int? {
        let database = try InlineSQLiteDatabase(path: path, waitsForDisk: true, logger: Logger(label: "test"))
        defer { database.close() }
        return try await database.raw("SELECT max(version) AS v FROM signet_schema_migrations").first()?.decode(column: "v", as: Int?.self)
    }

    private func seqs(_ database: InlineSQLiteDatabase) async throws -> [Int] {
        try await database.raw("SELECT seq FROM signet_audit_events ORDER BY seq").all().map { try $0.decode(column: "seq", as: Int.self) }
    }

    private func tableSQL(_ database: InlineSQLiteDatabase) async throws -> [String: String] {
        let rows = try await database.raw("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all()
        return try Dictionary(
            uniqueKeysWithValues: rows.map { (try $0.decode(column: "name", as: String.self), try $0.decode(column: "sql", as: String.self)) })
    }
}
