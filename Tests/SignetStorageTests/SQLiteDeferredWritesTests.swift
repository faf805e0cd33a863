import Foundation
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetTesting
import Testing

/// Audit events on SQLite are queued and written together before the next flush
/// (Sources/SignetStorage/SQLite/DeferredWrites.swift): one commit for many events, readable at
/// once through the store, on disk before any answer that waits for the disk, never lost at close.
@Suite("SQLite: audit events written together, before the flush that answers wait for")
struct SQLiteDeferredWritesTests {
    private func event(_ index: Int, user: String = "alice") -> AuditEventRecord {
        AuditEventRecord(
            id: "event-\(index)", at: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)), kind: "token.issued", userID: user,
            clientID: "bank-app", actor: "client", target: "grant-\(index)", reason: nil)
    }

    private func client(_ id: String) -> ClientRecord {
        ClientRecord(id: id, name: id, authMethod: .none, redirectURIs: ["com.example.app:/cb"], createdAt: Date())
    }

    /// The events in the file, as another process would read them (ids in the order written).
    private func eventsInFile(_ path: String) throws -> [String] {
        let connection = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
        defer { connection.close() }
        return try connection.run("SELECT id FROM signet_audit_events ORDER BY seq", binds: []).rows.compactMap {
            guard case .text(let id) = $0.first else { return nil }
            return id
        }
    }

    /// A store in `normal` mode whose timed flush comes `laterFlush` after a commit; closed after `body`.
    private func withNormalStore(laterFlush: Duration, _ body: (SQLStore, InlineSQLiteDatabase, String) async throws -> Void) async throws {
        try await withTemporarySQLitePath("deferred") { path in
            let store = try await SQLStore.sqlite(path: path, synchronous: .normal, laterFlush: laterFlush)
            do {
                try await body(store, try #require(store.database as? InlineSQLiteDatabase), path)
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
        }
    }

    @Test("twenty events are written in one commit, readable through the store at once, newest first, and not before")
    func manyEventsOneCommit() async throws {
        try await withNormalStore(laterFlush: .seconds(3600)) { store, database, path in
            let before = database.commits.made
            for index in 0..<20 { try await store.appendAuditEvent(event(index)) }
            // Queued, not written: no commit yet, and another process sees none.
            #expect(database.commits.made == before)
            #expect(try eventsInFile(path).isEmpty)
            let listed = try await store.auditEvents(AuditQuery(limit: 100))
            #expect(listed.map(\.id) == (0..<20).reversed().map { "event-\($0)" })
            #expect(database.commits.made == before + 1)
            #expect(try eventsInFile(path) == (0..<20).map { "event-\($0)" })
        }
    }

    @Test("with full, an answer that waits for the disk is given after its audit event is written and on disk, even when its other commits were on disk already")
    func answerWaitsForItsEvent() async throws {
        try await withTemporarySQLiteStore("deferred-full") { store, database, path in
            // A write outside an answer: on disk when it returns, so the answer below has no commit
            // of its own that is not on disk yet.
            try await store.insertClient(client("before"))
            #expect(database.commits.durable >= database.commits.made)
            try await store.durableWrites {
                try await store.appendAuditEvent(event(1))
                #expect(try eventsInFile(path).isEmpty, "queued until the answer's flush")
            }
            #expect(try eventsInFile(path) == ["event-1"])
            #expect(database.commits.durable >= database.commits.made)
            // With a binding commit of its own, too.
            try await store.durableWrites {
                try await store.insertClient(client("during"))
                try await store.appendAuditEvent(event(2))
            }
            #expect(try eventsInFile(path) == ["event-1", "event-2"])
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test("with full, an audit event outside an answer is written and on disk when it returns")
    func eventAloneIsDurable() async throws {
        try await withTemporarySQLiteStore("deferred-alone") { store, database, path in
            try await store.appendAuditEvent(event(1))
            #expect(try eventsInFile(path) == ["event-1"])
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test("with full, the event of an answer that does not bind is written a moment later, though nobody waits, and flushed at close")
    func nonBindingEventIsWrittenSoon() async throws {
        var opened: InlineSQLiteDatabase?
        try await withTemporarySQLiteStore("deferred-later") { store, database, path in
            opened = database
            try await store.durableWrites { try await WriteBinding.notBinding { try await store.appendAuditEvent(event(1)) } }
            // Written about 0.2 s later; polled for up to 30 s so that a slow machine cannot fail it.
            for _ in 0..<3000 where try eventsInFile(path).isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            #expect(try eventsInFile(path) == ["event-1"])
            // Written, not flushed, as any write nobody waits for with `full`.
            #expect(database.commits.durable < database.commits.made)
        }
        let closed = try #require(opened).commits
        #expect(closed.durable >= closed.made)
    }

    @Test("with normal, the timed flush writes queued events, and closing the store writes what is left")
    func normalWritesOnTimerAndAtClose() async throws {
        try await withTemporarySQLitePath("deferred-timer") { path in
            let store = try await SQLStore.sqlite(path: path, synchronous: .normal)
            try await store.appendAuditEvent(event(1))
            for _ in 0..<3000 where try eventsInFile(path).isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            #expect(try eventsInFile(path) == ["event-1"])
            try await store.close()
        }
        try await withTemporarySQLitePath("deferred-close") { path in
            let store = try await SQLStore.sqlite(path: path, synchronous: .normal, laterFlush: .seconds(3600))
            let database = try #require(store.database as? InlineSQLiteDatabase)
            for index in 1...3 { try await store.appendAuditEvent(event(index)) }
            #expect(try eventsInFile(path).isEmpty)
            try await store.close()
            #expect(database.commits.durable >= database.commits.made)
            #expect(try eventsInFile(path) == ["event-1", "event-2", "event-3"])
        }
    }

    @Test("while another process holds the write lock, queued events wait for it and are then written in the order they were made")
    func eventsWaitForAnotherProcess() async throws {
        try await withTemporarySQLiteStore("deferred-busy") { store, database, path in
            let other = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
            defer { other.close() }
            _ = try other.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)
            let waiting = Task {
                try await store.durableWrites {
                    try await store.appendAuditEvent(event(1))
                    try await store.appendAuditEvent(event(2))
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            // Still queued: the writer is free for the store's reads meanwhile.
            #expect(database.writerIsHeld == false)
            #expect(try await store.client(id: "nobody") == nil)
            _ = try other.run("COMMIT", binds: [])
            try await waiting.value
            #expect(try eventsInFile(path) == ["event-1", "event-2"])
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test("a batch that cannot be written is rolled back whole and is a failed flush: answers fail and readiness says why")
    func failedBatchIsAFailedFlush() async throws {
        try await withNormalStore(laterFlush: .seconds(3600)) { store, database, path in
            try await store.appendAuditEvent(event(1))
            try await store.appendAuditEvent(event(2, user: "refused"))
            // Another process makes the second insert fail.
            let other = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
            defer { other.close() }
            _ = try other.run(
                "CREATE TRIGGER refuse BEFORE INSERT ON signet_audit_events WHEN NEW.user_id = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END",
                binds: [])
            await #expect(throws: (any Error).self) { try await store.auditEvents(AuditQuery(limit: 10)) }
            #expect(database.flushFailure?.contains("writing the audit trail") == true)
            await #expect(throws: (any Error).self) { try await store.durableWrites { try await store.insertClient(client("after")) } }
            // Neither event was written: the batch was rolled back whole.
            #expect(try eventsInFile(path).isEmpty)
        }
    }
}
