import Foundation
import SQLKit
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetStore
import SignetTesting
import Testing

/// The SQLite store's commit and flush rules (Sources/SignetStorage/SQLite/): a write reported
/// done is on disk, the writes of one answer share one flush, and no caller can leave the shared
/// connections inside a transaction.
@Suite("SQLite: one flush per answer, no transactions on shared connections")
struct SQLiteDurabilityTests {
    /// A store in `full` mode with no timed flush during a test: what these check is who waits.
    private func withStore(_ body: (SQLStore, InlineSQLiteDatabase, String) async throws -> Void) async throws {
        try await withTemporarySQLiteStore("durability", laterFlush: .seconds(3600), body)
    }

    /// A store in `normal` mode (nobody waits for the disk) whose timed flush comes `laterFlush`
    /// after a commit; closed after `body`.
    private func withNormalStore(laterFlush: Duration, _ body: (SQLStore, InlineSQLiteDatabase) async throws -> Void) async throws {
        try await withTemporarySQLiteStore("normal", synchronous: .normal, laterFlush: laterFlush) { store, database, _ in
            try await body(store, database)
        }
    }

    @Test("a write outside an answer is on disk when it returns")
    func writeAloneIsFlushed() async throws {
        try await withStore { store, database, _ in
            try await store.insertClient(sampleClient("alone"))
            let commits = database.commits
            #expect(commits.made > 0)
            #expect(commits.durable >= commits.made)
        }
    }

    @Test("inside an answer writes wait for nothing; all are committed once and on disk before the answer is given")
    func answerSharesOneFlush() async throws {
        try await withStore { store, database, _ in
            let before = database.commits
            #expect(before.durable == before.made)
            try await store.durableWrites {
                for index in 0..<3 { try await store.insertClient(sampleClient("answer-\(index)")) }
                // In the open batch, not yet committed nor flushed: the answer has not been given.
                #expect(database.commits == before)
            }
            let after = database.commits
            #expect(after.made == before.made + 1)
            #expect(after.durable >= after.made)
        }
    }

    @Test("an answer that throws still waits for its writes to be on disk")
    func failedAnswerIsFlushed() async throws {
        struct Refused: Error {}
        try await withStore { store, database, _ in
            await #expect(throws: Refused.self) {
                try await store.durableWrites {
                    try await store.insertClient(sampleClient("spent"))
                    throw Refused()
                }
            }
            let commits = database.commits
            #expect(commits.durable >= commits.made)
        }
    }

    @Test("a transaction cannot be opened through the shared connections, however it is written; the store goes on working")
    func transactionsRefused() async throws {
        try await withStore { store, database, path in
            for statement in ["BEGIN", "BEGIN IMMEDIATE", "/* hidden */ BEGIN", "  begin", "SAVEPOINT s"] {
                await #expect(throws: (any Error).self, "\(statement)") {
                    try await database.raw(SQLQueryString(statement)).run()
                }
            }
            // Still in autocommit: a write commits at once and another connection sees it.
            try await store.insertClient(sampleClient("after"))
            let other = try await SQLStore.sqlite(path: path)
            #expect(try await other.client(id: "after") != nil)
            try await other.close()
        }
    }

    @Test("an answer whose writes do not bind is given before they are on disk; outside an answer such a write still waits")
    func nonBindingAnswerDoesNotWait() async throws {
        try await withStore { store, database, _ in
            try await store.durableWrites {
                try await WriteBinding.notBinding { try await store.insertClient(sampleClient("new")) }
            }
            let after = database.commits
            #expect(after.durable < after.made)
            // Outside an answer the write itself waits, binding or not.
            try await WriteBinding.notBinding { try await store.insertClient(sampleClient("alone")) }
            let alone = database.commits
            #expect(alone.durable >= alone.made)
        }
    }

    @Test("with normal nobody waits for the disk, and the timed flush puts every commit on it a moment later")
    func normalFlushesOnATimer() async throws {
        try await withTemporarySQLitePath("normal") { path in
            let store = try await SQLStore.sqlite(path: path, synchronous: .normal)
            let database = try #require(store.sqlite)
            #expect(!database.waitsForDisk)
            for id in ["one", "two", "three"] { try await store.insertClient(sampleClient(id)) }
            try await store.durableWrites { try await store.insertClient(sampleClient("binding")) }
            let made = database.commits.made
            #expect(made > 0)
            // Flushed about 0.2 s after the first commit; polled for up to 30 s, so that a slow
            // machine cannot fail it. Nothing else would flush: no one waits, and no checkpoint
            // comes before 256 commits.
            for _ in 0..<3000 where database.commits.durable < made { try await Task.sleep(for: .milliseconds(10)) }
            #expect(database.commits.durable >= made)
            // A later commit is flushed by a later timed flush.
            try await store.insertClient(sampleClient("later"))
            let later = database.commits.made
            for _ in 0..<3000 where database.commits.durable < later { try await Task.sleep(for: .milliseconds(10)) }
            #expect(database.commits.durable >= later)
            try await store.close()
        }
    }

    @Test("with normal, nothing is flushed before the timed flush is due, and closing the store flushes what is left")
    func normalFlushWaitsItsTimeAndCloses() async throws {
        var database: InlineSQLiteDatabase?
        try await withNormalStore(laterFlush: .seconds(3600)) { store, opened in
            database = opened
            try await store.insertClient(sampleClient("one"))
            try await store.durableWrites { try await store.insertClient(sampleClient("binding")) }
            // An hour away: only the timer could have flushed, and it has not.
            #expect(opened.commits.durable < opened.commits.made)
        }
        let closed = try #require(database).commits
        #expect(closed.made > 0)
        #expect(closed.durable >= closed.made)
    }

    @Test("with full, closing the store flushes the commits of answers that did not wait for them")
    func fullCloseFlushesWhatNobodyWaitedFor() async throws {
        var opened: InlineSQLiteDatabase?
        try await withStore { store, database, _ in
            opened = database
            try await store.durableWrites { try await WriteBinding.notBinding { try await store.insertClient(sampleClient("session")) } }
            #expect(database.commits.durable < database.commits.made)
        }
        let closed = try #require(opened).commits
        #expect(closed.durable >= closed.made)
    }

    @Test("with normal, once a flush has failed every answer is an error, readiness says why, and no later flush reports commits durable")
    func normalFailedFlushFailsEveryAnswer() async throws {
        var opened: InlineSQLiteDatabase?
        try await withNormalStore(laterFlush: .seconds(3600)) { store, database in
            opened = database
            try await store.durableWrites { try await store.insertClient(sampleClient("before")) }
            database.flusher.latch(SQLiteFailure(code: 10 /* SQLITE_IOERR */, message: "simulated"), during: "a timed flush to disk")
            await #expect(throws: SQLiteFailure.self) { try await store.durableWrites { _ = try await store.client(id: "before") } }
            await #expect(throws: SQLiteFailure.self) { try await store.durableWrites { try await store.insertClient(sampleClient("after")) } }
            let reason = try #require(await store.unreadiness())
            #expect(reason.contains("a timed flush to disk failed (simulated)"))
        }
        // Closing flushes what is left, but not after a failure: the kernel may have dropped pages.
        let closed = try #require(opened).commits
        #expect(closed.durable < closed.made)
    }

    @Test("one binding write makes the answer wait for all of its writes and every commit before its end; an answer that only reads does not wait")
    func bindingWriteWaitsForAll() async throws {
        try await withStore { store, database, _ in
            try await store.durableWrites {
                try await WriteBinding.notBinding { try await store.insertClient(sampleClient("first")) }
            }
            #expect(database.commits.durable < database.commits.made)
            // Reading does not bind: the earlier commit is still not on disk.
            try await store.durableWrites { _ = try await store.client(id: "first") }
            #expect(database.commits.durable < database.commits.made)
            try await store.durableWrites {
                try await WriteBinding.notBinding { try await store.insertClient(sampleClient("second")) }
                try await store.insertClient(sampleClient("binding"))
            }
            let after = database.commits
            #expect(after.durable >= after.made)
        }
    }

    @Test("a refusal after a binding write waits too; after non-binding writes only, it does not")
    func refusalsFollowTheirWrites() async throws {
        struct Refused: Error {}
        try await withStore { store, database, _ in
            await #expect(throws: Refused.self) {
                try await store.durableWrites {
                    try await WriteBinding.notBinding { try await store.insertClient(sampleClient("made")) }
                    throw Refused()
                }
            }
            #expect(database.commits.durable < database.commits.made)
            await #expect(throws: Refused.self) {
                try await store.durableWrites {
                    try await store.insertClient(sampleClient("spent"))
                    throw Refused()
                }
            }
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test("once a flush has failed every answer is an error, binding or not, reading or not, and readiness says why")
    func failedFlushFailsEveryAnswer() async throws {
        try await withStore { store, database, _ in
            database.flusher.latch(SQLiteFailure(code: 10 /* SQLITE_IOERR */, message: "simulated"), during: "a flush to disk")
            await #expect(throws: SQLiteFailure.self) {
                try await store.durableWrites { try await WriteBinding.notBinding { try await store.insertClient(sampleClient("new")) } }
            }
            await #expect(throws: SQLiteFailure.self) { try await store.durableWrites { _ = try await store.client(id: "new") } }
            await #expect(throws: SQLiteFailure.self) { try await store.durableWrites { try await store.insertClient(sampleClient("binding")) } }
            let reason = try #require(await store.unreadiness())
            #expect(reason.contains("a flush to disk failed (simulated)"))
        }
    }

    @Test(
        "many writers waiting for flushes at once all return, each after a flush that covered a commit made after it began; at the end every commit is on disk"
    )
    func manyWaiters() async throws {
        try await withStore { store, database, _ in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        // This write's commit is numbered after every commit made before it starts.
                        let before = database.commits.made
                        try await store.insertClient(sampleClient("crowd-\(index)"))
                        return database.commits.durable > before
                    }
                }
                for try await durable in group { #expect(durable) }
            }
            #expect(try await store.listClients().filter { $0.id.hasPrefix("crowd-") }.count == 64)
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test("under steady writes from several tasks the log is copied whole and starts again from its beginning, so it stays small")
    func logStartsAgainUnderSteadyWrites() async throws {
        try await withStore { store, database, path in
            try await database.raw("CREATE TABLE churn (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)").run()
            let payload = String(repeating: "x", count: 200)
            // 10,000 answers of a write each, eight at a time: batches follow each other, one is
            // open at almost every checkpoint, and a log never started again holds over 40 MB.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        for index in 0..<1250 {
                            try await store.durableWrites {
                                try await database.raw("INSERT INTO churn (id, payload) VALUES (\(bind: writer * 10_000 + index), \(bind: payload))")
                                    .run()
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let rows = try await database.raw("SELECT count(*) AS n FROM churn").first()?.decode(column: "n", as: Int.self)
            #expect(rows == 10_000)
            // A checkpoint every 64 commits (batches): the log's high-water mark stays a few MB here,
            // even with the cores busy elsewhere (the flusher's checkpoints lag behind then). Never
            // started again, it holds every commit: 72 MB with the checkpoint this replaced.
            let logSize = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
            #expect(logSize < 16 << 20, "the log grew to \(logSize) bytes")
        }
    }

    @Test(
        "the log is copied into the file whole, or the copy is refused and the log keeps its frames (a reader on an older snapshot holds them past the patience); a reader that lets go in time is waited for"
    )
    func completeCopyOrRefusal() async throws {
        try await withStore { store, database, path in
            try await store.insertClient(sampleClient("before-the-reader"))
            let reader = try SQLiteConnectionHandle(path: path, settings: [])
            _ = try reader.run("BEGIN", binds: [], mayOpenTransaction: true)
            _ = try reader.run("SELECT count(*) FROM signet_clients", binds: [], mayOpenTransaction: true)
            try await store.insertClient(sampleClient("after-the-reader"))
            await #expect(throws: SQLiteFailure.self) { try await database.copyLogIntoDatabaseCompletely(patience: 50) }
            #expect(try logSize(path) > 0)
            // A reader that lets go while the copy waits for it: the copy is made.
            let copy = Task { try await database.copyLogIntoDatabaseCompletely() }
            try await Task.sleep(for: .milliseconds(100))
            _ = try reader.run("ROLLBACK", binds: [], mayOpenTransaction: true)
            reader.close()
            try await copy.value
            #expect(try logSize(path) == 0)
            #expect(try await store.client(id: "after-the-reader") != nil)
        }
    }

    private func logSize(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
    }

    @Test("a file that cannot be put in WAL mode or is no database is refused with a storage failure")
    func notADatabase() async throws {
        let path = try TestFolder.make("notdb", create: false).path
        try Data("this is not a database, it is only text".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        await #expect(throws: SignetError.self) { _ = try await SQLStore.sqlite(path: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "this is not a database, it is only text")
    }

    @Test(
        "each statement runs where its route says; a statement that is not what its route says is refused before it runs, and stored data is left as it was"
    )
    func routes() async throws {
        let path = try TestFolder.make("routes", create: false).path
        let store = try await SQLStore.sqlite(path: path)
        let database = try #require(store.sqlite)
        _ = try await store.writes.raw("INSERT INTO signet_secrets (name, value) VALUES ('route-test', 'kept')").run()
        // A write sent as a read, a read sent as a write, and transaction control either way: refused.
        for (view, sql) in [
            (store.lookUps, "UPDATE signet_secrets SET value = 'changed' WHERE name = 'route-test'"),
            (store.listings, "DELETE FROM signet_secrets WHERE name = 'route-test'"),
            (store.writes, "SELECT value FROM signet_secrets WHERE name = 'route-test'"),
            (store.writes, "COMMIT"), (store.lookUps, "BEGIN"), (store.listings, "ROLLBACK"), (database, "SAVEPOINT x"),
        ] {
            await #expect(throws: SQLiteFailure.self, "\(sql)") { _ = try await view.raw(SQLQueryString(sql)).all() }
        }
        let value = try await store.lookUps.raw("SELECT value FROM signet_secrets WHERE name = 'route-test'").first()?.decode(
            column: "value", as: String.self)
        #expect(value == "kept")
        #expect(try await store.listings.raw("SELECT name FROM signet_secrets ORDER BY name").all().count >= 1)
        // Without a route, SQLite's verdict places it: a query reads, a write writes.
        _ = try await database.raw("UPDATE signet_secrets SET value = 'again' WHERE name = 'route-test'").run()
        #expect(
            try await database.raw("SELECT value FROM signet_secrets WHERE name = 'route-test'").first()?.decode(column: "value", as: String.self)
                == "again")
        try await store.close()
        for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
