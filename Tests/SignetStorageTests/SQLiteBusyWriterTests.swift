import Foundation
import SignetCore
import SignetServer
@testable import SignetStorage
import Testing

/// A write while another process holds SQLite's write lock (a `signet` command beside the
/// server): it waits outside the writer's lock, so reads and the thread go on, and it lands once
/// the lock is released.
@Suite("SQLite: a write meeting another process's lock waits without holding the writer")
struct SQLiteBusyWriterTests {
    @Test("the write waits, the writer stays free for reads, and the write lands after the other commits")
    func writeWaitsOutsideTheWriter() async throws {
        try await withTemporarySQLitePath("busy") { path in
            let store = try await SQLStore.sqlite(path: path)
            do { try await waitsOutsideTheWriter(store, path: path) } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
        }
    }

    private func waitsOutsideTheWriter(_ store: SQLStore, path: String) async throws {
        let database = try #require(store.sqlite)
        try await store.insertClient(sampleClient("before"))
        // Another connection, as another process would, takes the write lock and keeps it.
        let other = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
        defer { other.close() }
        _ = try other.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)

        let waiting = Task { try await store.insertClient(sampleClient("waiting")) }
        try await Task.sleep(for: .milliseconds(300))
        // Still waiting, yet the writer is not held and the store answers reads meanwhile.
        #expect(try await store.client(id: "waiting") == nil)
        #expect(database.writerIsHeld == false)
        #expect(try await store.client(id: "before")?.id == "before")

        _ = try other.run("COMMIT", binds: [])
        try await waiting.value
        #expect(try await store.client(id: "waiting")?.id == "waiting")
        let commits = database.commits
        #expect(commits.durable >= commits.made)
    }

    @Test("the waits are 1, 2, 5, then 10 ms, and end after 5 s in all, by their steps or by the clock")
    func busyWaitSchedule() async throws {
        var wait = InlineSQLiteDatabase.BusyWait()
        var delays: [Int64] = []
        while let delay = wait.nextDelay() { delays.append(delay) }
        #expect(Array(delays.prefix(6)) == [1, 2, 5, 10, 10, 10])
        #expect(delays.reduce(0, +) == 5000)
        #expect(delays.allSatisfy { $0 > 0 && $0 <= 10 })
        // Timers that come late: the patience is spent by the clock as well. Nothing was waited by
        // the steps yet, so only the clock can end it (and a slow machine only ends it sooner).
        var late = InlineSQLiteDatabase.BusyWait(patience: 30)
        try await Task.sleep(for: .milliseconds(40))
        #expect(late.nextDelay() == nil)
    }

    @Test("a read on the writer runs there, says when it writes, and goes to a reader when the writer is closed or inside a transaction")
    func writerReadRouting() async throws {
        try await withTemporarySQLitePath("routing") { path in
            let store = try await SQLStore.sqlite(path: path)
            try await store.insertClient(sampleClient("routed"))
            try await store.close()
            let connection = try SQLiteConnectionHandle(path: path, settings: [])
            defer { connection.close() }
            let select = "SELECT id FROM signet_clients WHERE id = ?"
            guard case .rows(let result) = try InlineSQLiteDatabase.attemptRead(select, [.text("routed")], onWriter: connection) else {
                Issue.record("a look-up on a free writer runs there")
                return
            }
            #expect(result.rows.count == 1)
            guard
                case .writes = try InlineSQLiteDatabase.attemptRead(
                    "DELETE FROM signet_clients WHERE id = ?", [.text("routed")], onWriter: connection)
            else {
                Issue.record("a statement that writes is handed back to the write path")
                return
            }
            _ = try connection.run("BEGIN", binds: [], mayOpenTransaction: true)
            guard case .elsewhere = try InlineSQLiteDatabase.attemptRead(select, [.text("routed")], onWriter: connection) else {
                Issue.record("inside a transaction the writer is not used for reads")
                return
            }
            _ = try connection.run("ROLLBACK", binds: [])
            connection.close()
            guard case .elsewhere = try InlineSQLiteDatabase.attemptRead(select, [.text("routed")], onWriter: connection) else {
                Issue.record("a closed writer is not used for reads")
                return
            }
        }
    }

    @Test("a busy refusal is retried, a stale snapshot (which waiting cannot cure) is not")
    func busyCodes() {
        #expect(SQLiteFailure(code: 5, message: "").isBusy)
        #expect(!SQLiteFailure(code: 5, message: "").isStaleSnapshot)
        #expect(SQLiteFailure(code: 261, message: "").isBusy)  // SQLITE_BUSY_RECOVERY
        #expect(SQLiteFailure(code: 517, message: "").isStaleSnapshot)  // SQLITE_BUSY_SNAPSHOT
        #expect(!SQLiteFailure(code: 6, message: "").isBusy)  // SQLITE_LOCKED
    }

    @Test(
        "a lock held past the wait is an outage (storageUnavailable, 503) only while the answer has written nothing; after a write of its own the failure stands, on full and normal"
    )
    func lockedAfterOwnWrite() async throws {
        for synchronous in SQLStore.Synchronous.allCases {
            try await withTemporarySQLitePath("locked-\(synchronous)") { path in
                let store = try await SQLStore.sqlite(path: path, synchronous: synchronous)
                do {
                    let other = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
                    defer { other.close() }
                    // Nothing written yet by this answer: an outage.
                    _ = try other.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)
                    await #expect {
                        try await store.durableWrites { try await store.insertClient(sampleClient("first")) }
                    } throws: { ($0 as? SignetError)?.code == .storageUnavailable }
                    _ = try other.run("ROLLBACK", binds: [], mayOpenTransaction: true)
                    // One write of its own, then the lock: not an outage, the failure itself.
                    await #expect {
                        try await store.durableWrites {
                            try await store.insertClient(sampleClient("written"))
                            try await store.sqlite?.commitPendingWrites()
                            _ = try other.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)
                            try await store.insertClient(sampleClient("blocked"))
                        }
                    } throws: { $0 is SQLiteFailure }
                    _ = try? other.run("ROLLBACK", binds: [], mayOpenTransaction: true)
                    #expect(try await store.client(id: "written") != nil, "\(synchronous)")
                } catch {
                    try? await store.close()
                    throw error
                }
                try await store.close()
            }
        }
    }
}
