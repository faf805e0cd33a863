import Foundation
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetStore
import SignetTesting
import Testing

/// With `full`, the audit events of answers that wait for the disk are queued and written together
/// just before the flush they wait for (Sources/SignetStorage/SQLite/DeferredWrites.swift): one
/// commit for many events, readable at once through the store, on disk before the answer, never
/// left behind at close; every other event is written at once.
@Suite("SQLite: audit events written together, before the flush that answers wait for")
struct SQLiteDeferredWritesTests {
    private func event(_ index: Int, user: String = "alice") -> AuditEventRecord {
        AuditEventRecord(
            id: "event-\(index)", at: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)), kind: "token.issued", userID: user,
            clientID: "bank-app", actor: "client", target: "grant-\(index)", reason: nil)
    }

    /// The events in the file, as another process would read them (ids in the order written).
    private func eventsInFile(_ path: String) throws -> [String] {
        try textColumn(of: "SELECT id FROM signet_audit_events ORDER BY seq", inFile: path)
    }

    @Test("with full, the events of an answer are written in one commit just before its flush, on disk before it is given, and not before")
    func manyEventsOneCommit() async throws {
        try await withTemporarySQLiteStore("deferred-batch") { store, database, path in
            let before = database.commits
            try await store.durableWrites {
                for index in 0..<20 { try await store.appendAuditEvent(event(index)) }
                // Queued, not written: no commit yet, and another process sees none.
                #expect(database.commits.made == before.made)
                #expect(try eventsInFile(path).isEmpty)
            }
            #expect(database.commits.made == before.made + 1)
            #expect(database.commits.durable >= database.commits.made)
            #expect(try eventsInFile(path) == (0..<20).map { "event-\($0)" })
        }
    }

    @Test("a read of the audit trail writes what is queued first: every event recorded is listed, newest first")
    func readWritesQueuedEvents() async throws {
        try await withTemporarySQLiteStore("deferred-read") { store, _, path in
            try await store.durableWrites {
                for index in 0..<3 { try await store.appendAuditEvent(event(index)) }
                #expect(try eventsInFile(path).isEmpty, "queued until a read or the answer's flush")
                let listed = try await store.auditEvents(AuditQuery(limit: 10))
                #expect(listed.map(\.id) == ["event-2", "event-1", "event-0"])
                #expect(try eventsInFile(path) == ["event-0", "event-1", "event-2"])
            }
        }
    }

    @Test(
        "with full, an answer that waits for the disk is given after its audit event is written and on disk, even when its other commits were on disk already"
    )
    func answerWaitsForItsEvent() async throws {
        try await withTemporarySQLiteStore("deferred-full") { store, database, path in
            // A write outside an answer: on disk when it returns, so the answer below has no commit
            // of its own that is not on disk yet.
            try await store.insertClient(sampleClient("before"))
            #expect(database.commits.durable >= database.commits.made)
            try await store.durableWrites {
                try await store.appendAuditEvent(event(1))
                #expect(try eventsInFile(path).isEmpty, "queued until the answer's flush")
            }
            #expect(try eventsInFile(path) == ["event-1"])
            #expect(database.commits.durable >= database.commits.made)
            // With a binding commit of its own, too.
            try await store.durableWrites {
                try await store.insertClient(sampleClient("during"))
                try await store.appendAuditEvent(event(2))
            }
            #expect(try eventsInFile(path) == ["event-1", "event-2"])
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test("an event outside an answer, of an answer that does not bind, or with normal, is not queued: written as any write")
    func otherEventsAreWrittenAtOnce() async throws {
        try await withTemporarySQLiteStore("deferred-alone", laterFlush: .seconds(3600)) { store, database, path in
            try await store.appendAuditEvent(event(1))
            #expect(try eventsInFile(path) == ["event-1"])
            #expect(database.commits.durable >= database.commits.made)
            try await store.durableWrites {
                try await WriteBinding.notBinding { try await store.appendAuditEvent(event(2)) }
                #expect(database.flusher.deferred.lastTicket == 0, "not queued")
            }
            // Committed before the answer, as any write that binds nothing; not waited for on disk.
            #expect(try eventsInFile(path) == ["event-1", "event-2"])
            #expect(database.commits.durable < database.commits.made)
        }
        try await withTemporarySQLiteStore("deferred-normal", synchronous: .normal, laterFlush: .seconds(3600)) { store, _, path in
            try await store.durableWrites { try await store.appendAuditEvent(event(3)) }
            #expect(try eventsInFile(path) == ["event-3"])
        }
    }

    @Test("statements still queued when the store closes are written by the close")
    func closeWritesWhatIsQueued() async throws {
        try await withTemporarySQLitePath("deferred-close") { path in
            let store = try await SQLStore.sqlite(path: path)
            let database = try #require(store.sqlite)
            // As a flush that met another process's lock for too long leaves them.
            let insert = "INSERT INTO signet_audit_events (id, at, kind, data) VALUES (?, 0, 'test', '{}')"
            for id in ["left-1", "left-2"] { _ = database.flusher.deferred.add(DeferredWrites.Statement(sql: insert, values: [.text(id)])) }
            #expect(try eventsInFile(path).isEmpty)
            try await store.close()
            #expect(try eventsInFile(path) == ["left-1", "left-2"])
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test(
        "while another process holds the write lock, queued events wait for it, then are written in the order they were made, those queued meanwhile after them"
    )
    func eventsWaitForAnotherProcess() async throws {
        try await withTemporarySQLiteStore("deferred-busy") { store, database, path in
            // Patience enough for a slow machine: this test is about the order, not the patience.
            database.flusher.deferredPatience.store(60_000, ordering: .relaxed)
            let other = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
            defer { other.close() }
            _ = try other.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)
            let first = Task {
                try await store.durableWrites {
                    try await store.appendAuditEvent(event(1))
                    try await store.appendAuditEvent(event(2))
                }
            }
            // Polled for up to 30 s so that a slow machine cannot fail it.
            for _ in 0..<3000 where database.flusher.deferred.lastTicket < 2 { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(100))
            // Queued after the first batch, whether that is waiting in the queue or for the lock.
            let second = Task { try await store.durableWrites { try await store.appendAuditEvent(event(3)) } }
            for _ in 0..<3000 where database.flusher.deferred.lastTicket < 3 { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(100))
            #expect(try eventsInFile(path).isEmpty)
            // The store still answers reads meanwhile.
            #expect(try await store.client(id: "nobody") == nil)
            _ = try other.run("COMMIT", binds: [])
            try await first.value
            try await second.value
            #expect(try eventsInFile(path) == ["event-1", "event-2", "event-3"])
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test(
        "past the patience with another process's lock, an answer whose events are not written fails while one that waits only for its commits is given; the events are written later"
    )
    func lockPastPatienceFailsOnlyThoseWithEvents() async throws {
        try await withTemporarySQLiteStore("deferred-patience") { store, database, path in
            database.flusher.deferredPatience.store(200, ordering: .relaxed)
            let gate = Gate()
            // An answer with a binding commit made before the lock is taken, which waits below.
            let commitsOnly = Task {
                try await store.durableWrites {
                    try await store.insertClient(sampleClient("made-before"))
                    await gate.wait()
                }
            }
            // Taken once that commit is made (polled for up to 30 s so that a slow machine cannot fail it).
            for _ in 0..<3000 where try await store.client(id: "made-before") == nil { try await Task.sleep(for: .milliseconds(10)) }
            let other = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
            defer { other.close() }
            _ = try other.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)
            let withEvent = Task { try await store.durableWrites { try await store.appendAuditEvent(event(1)) } }
            // The event is queued before the other answer ends, so the two wait for the same flushes.
            for _ in 0..<3000 where database.flusher.deferred.lastTicket < 1 { try await Task.sleep(for: .milliseconds(10)) }
            await gate.open()
            try await commitsOnly.value
            await #expect(throws: SQLiteFailure.self) { try await withEvent.value }
            #expect(try await store.client(id: "made-before") != nil)
            _ = try other.run("COMMIT", binds: [])
            // Still queued; the next flush writes it, here the one an event outside an answer waits
            // for (that event is written at once, so before it: `seq` is the order of writing).
            try await store.appendAuditEvent(event(2))
            #expect(try eventsInFile(path) == ["event-2", "event-1"])
        }
    }

    @Test("an event made by a task its answer left running is not queued for that answer: it waits for the disk itself")
    func eventAfterTheAnswer() async throws {
        try await withTemporarySQLiteStore("deferred-after") { store, database, path in
            let gate = Gate()
            var left: Task<Void, any Error>?
            try await store.durableWrites {
                left = Task {
                    await gate.wait()
                    try await store.appendAuditEvent(event(1))
                }
            }
            await gate.open()
            try await #require(left).value
            #expect(try eventsInFile(path) == ["event-1"])
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test("a purge and a backup write what is queued first: the purge counts a queued event, the backup holds it")
    func purgeAndBackupWriteTheQueue() async throws {
        try await withTemporarySQLiteStore("deferred-purge") { store, _, path in
            try await store.durableWrites {
                try await store.appendAuditEvent(event(1))
                #expect(try await store.purgeAuditEvents(before: Date(timeIntervalSince1970: 4_000_000_000)) == 1)
            }
            #expect(try eventsInFile(path).isEmpty)
            let copy = path + ".backup"
            try await store.durableWrites {
                try await store.appendAuditEvent(event(2))
                try await store.backup(to: copy)
            }
            #expect(try eventsInFile(copy) == ["event-2"])
        }
    }

    @Test(
        "once a flush has failed nothing is queued: the answer fails at once; on a closed writer queued statements are an error, none queued is not")
    func nothingQueuedAfterAFailureOrOnAClosedWriter() async throws {
        try await withTemporarySQLiteStore("deferred-latched") { store, database, _ in
            database.flusher.latch(SQLiteFailure(code: 10 /* SQLITE_IOERR */, message: "simulated"), during: "a flush to disk")
            await #expect(throws: SQLiteFailure.self) { try await store.durableWrites { try await store.appendAuditEvent(event(1)) } }
            #expect(database.flusher.deferred.lastTicket == 0)
        }
        try await withTemporarySQLitePath("deferred-closed") { path in
            let store = try await SQLStore.sqlite(path: path)
            try await store.close()
            let flusher = try #require(store.sqlite).flusher
            let closed = try SQLiteConnectionHandle(path: path, settings: [])
            closed.close()
            try flusher.commitBatch(on: closed)
            _ = flusher.deferred.add(
                DeferredWrites.Statement(sql: "INSERT INTO signet_audit_events (id, at, kind, data) VALUES ('x', 0, 'test', '{}')", values: []))
            #expect(throws: SQLiteFailure.self) { try flusher.commitBatch(on: closed) }
        }
    }

    @Test("a batch that cannot be written is rolled back whole and is a failed flush: its answer and later ones fail, and readiness says why")
    func failedBatchIsAFailedFlush() async throws {
        try await withTemporarySQLiteStore("deferred-failed") { store, database, path in
            // Another process makes the second insert fail.
            let other = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
            defer { other.close() }
            _ = try other.run(
                "CREATE TRIGGER refuse BEFORE INSERT ON signet_audit_events WHEN NEW.user_id = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END",
                binds: [])
            await #expect(throws: (any Error).self) {
                try await store.durableWrites {
                    try await store.appendAuditEvent(event(1))
                    try await store.appendAuditEvent(event(2, user: "refused"))
                }
            }
            #expect(try #require(await store.unreadiness()).contains("writing the audit trail failed"))
            await #expect(throws: (any Error).self) { try await store.durableWrites { try await store.insertClient(sampleClient("after")) } }
            // Neither event was written: the batch was rolled back whole.
            #expect(try eventsInFile(path).isEmpty)
        }
    }
}

/// Holds tasks until it is opened.
private actor Gate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        guard !isOpen else { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting.removeAll()
    }
}
