import Foundation
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetStore
import SignetTesting
import Testing

/// With `full`, the writes of answers being made together join one open transaction on the
/// writer, committed once just before the flush they wait for
/// (Sources/SignetStorage/SQLite/WriteBatch.swift): each answer sees its own writes, no other
/// connection sees them before that commit, every answer is given after it, and a failure that
/// ends the transaction fails every answer that counted on it.
@Suite("SQLite: the writes of answers made together share one transaction, committed once before their flush")
struct SQLiteWriteBatchTests {
    /// The clients in the file, as another process reads them.
    private func clientsInFile(_ path: String) throws -> [String] {
        try textColumn(of: "SELECT id FROM signet_clients ORDER BY id", inFile: path)
    }

    /// Runs SQL on a connection of its own, as another process would.
    private func runElsewhere(_ sql: String, on path: String) throws {
        let connection = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
        defer { connection.close() }
        try connection.execute(sql)
    }

    /// No timed commit in these tests unless they ask for one: what they check is who commits.
    private let noTimedCommit: Duration = .seconds(600)

    @Test(
        "answers made together commit once: each reads its own write at once (a listing too), no other connection sees any before the commit, and every answer is given after it is on disk"
    )
    func answersShareOneCommit() async throws {
        try await withTemporarySQLiteStore("batch-shared", laterFlush: noTimedCommit) { store, database, path in
            let before = database.commits.made
            let allWrote = Rendezvous(count: 4)
            let allLooked = Rendezvous(count: 4)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<4 {
                    group.addTask {
                        try await store.durableWrites {
                            try await store.insertClient(sampleClient("c\(index)"))
                            #expect(try await store.client(id: "c\(index)")?.id == "c\(index)")
                            #expect(try await store.listClients().map(\.id).contains("c\(index)"), "a listing reads the batch it wrote into")
                            await allWrote.arrive()
                            #expect(try clientsInFile(path).isEmpty, "uncommitted: no other connection sees it")
                            await allLooked.arrive()
                        }
                        // Given only once on disk.
                        #expect(database.commits.durable >= database.commits.made)
                    }
                }
                try await group.waitForAll()
            }
            #expect(database.commits.made == before + 1, "one commit for the four answers")
            #expect(try clientsInFile(path) == ["c0", "c1", "c2", "c3"])
        }
    }

    @Test("an answer that waits for no flush has what it wrote committed before it is given")
    func notBindingAnswerCommitsFirst() async throws {
        try await withTemporarySQLiteStore("batch-not-binding", laterFlush: noTimedCommit) { store, database, path in
            let before = database.commits.made
            try await store.durableWrites {
                try await WriteBinding.notBinding { try await store.insertClient(sampleClient("session")) }
                #expect(try clientsInFile(path).isEmpty)
            }
            #expect(database.commits.made == before + 1)
            #expect(try clientsInFile(path) == ["session"], "the next request, on any connection, finds it")
        }
    }

    /// Runs `meanwhile` while another answer, still being made, holds its write of the client
    /// `held` in the open batch; returns how that answer ended.
    private func whileAnotherAnswerHolds(
        _ held: String, in store: SQLStore, _ meanwhile: @escaping @Sendable () async throws -> Void
    ) async throws -> Result<Void, any Error> {
        let written = Rendezvous(count: 2)
        let done = Rendezvous(count: 2)
        let holder = Task {
            try await store.durableWrites {
                try await store.insertClient(sampleClient(held))
                await written.arrive()
                await done.arrive()
            }
        }
        await written.arrive()
        let outcome = await Task { try await meanwhile() }.result
        await done.arrive()
        let held = await holder.result
        try outcome.get()
        return held
    }

    @Test("an answer that read another answer's uncommitted write has it committed before it is given; a read for no request does not see it")
    func readerOfTheBatchCommitsIt() async throws {
        try await withTemporarySQLiteStore("batch-read", laterFlush: noTimedCommit) { store, _, path in
            let holder = try await whileAnotherAnswerHolds("a", in: store) {
                // A read for no request (an administrative command): committed writes only.
                #expect(try await store.client(id: "a") == nil)
                let seen = try await store.durableWrites { try await store.client(id: "a") }
                #expect(seen?.id == "a", "a request reads on the writer, inside the open batch")
                #expect(try clientsInFile(path) == ["a"], "committed before the answer that told of it")
            }
            #expect(throws: Never.self) { try holder.get() }
        }
    }

    @Test("a failed constraint ends its own statement only: the other answers' writes in the batch are committed")
    func constraintFailureKeepsTheBatch() async throws {
        try await withTemporarySQLiteStore("batch-constraint", laterFlush: noTimedCommit) { store, database, path in
            let holder = try await whileAnotherAnswerHolds("a", in: store) {
                await #expect(throws: (any Error).self) { try await store.durableWrites { try await store.insertClient(sampleClient("a")) } }
            }
            #expect(throws: Never.self) { try holder.get() }
            #expect(try clientsInFile(path) == ["a"])
            #expect(database.flushFailure == nil)
        }
    }

    @Test(
        "a failure that ends the whole transaction fails every answer whose writes were in it, and readiness says why; alone in its batch, it fails its own answer only"
    )
    func droppedBatchIsAFailedFlush() async throws {
        // A trigger that ends the transaction, as a full disk or an I/O error would.
        let trigger = "CREATE TRIGGER boom BEFORE INSERT ON signet_clients WHEN NEW.id LIKE 'boom%' BEGIN SELECT RAISE(ROLLBACK, 'simulated'); END"
        try await withTemporarySQLiteStore("batch-dropped-alone", laterFlush: noTimedCommit) { store, database, path in
            try runElsewhere(trigger, on: path)
            await #expect(throws: (any Error).self) { try await store.durableWrites { try await store.insertClient(sampleClient("boom")) } }
            #expect(database.flushFailure == nil, "the batch it opened held nothing else")
            try await store.durableWrites { try await store.insertClient(sampleClient("after")) }
            #expect(try clientsInFile(path) == ["after"])
        }
        try await withTemporarySQLiteStore("batch-dropped", laterFlush: noTimedCommit) { store, database, path in
            try runElsewhere(trigger, on: path)
            let holder = try await whileAnotherAnswerHolds("a", in: store) {
                await #expect(throws: (any Error).self) { try await store.durableWrites { try await store.insertClient(sampleClient("boom")) } }
            }
            #expect(throws: SQLiteFailure.self, "its write was rolled back with the batch") { try holder.get() }
            #expect(try clientsInFile(path).isEmpty)
            #expect(database.flushFailure?.contains("ended the transaction it shared with other requests") == true)
            await #expect(throws: SQLiteFailure.self) { try await store.durableWrites { try await store.insertClient(sampleClient("later")) } }
        }
    }

    @Test(
        "a batch ended without its commit (as SQLite ends it after an I/O error, in a read too) is a failed flush: the answers whose writes it held fail, and the next read or write on the writer finds it"
    )
    func batchEndedUnseen() async throws {
        for next in ["a read", "a write"] {
            try await withTemporarySQLiteStore("batch-ended", laterFlush: noTimedCommit) { store, database, path in
                let holder = try await whileAnotherAnswerHolds("a", in: store) {
                    try database.withWriter { try $0.execute("ROLLBACK") }
                    await #expect(throws: SQLiteFailure.self, "\(next) after it") {
                        try await store.durableWrites {
                            if next == "a read" {
                                _ = try await store.client(id: "nobody")
                            } else {
                                try await store.insertClient(sampleClient("b"))
                            }
                        }
                    }
                }
                #expect(throws: SQLiteFailure.self, "its write was lost with the batch (\(next))") { try holder.get() }
                #expect(database.flushFailure?.contains("ended the transaction it shared with other requests") == true)
                #expect(try clientsInFile(path).isEmpty)
            }
        }
    }

    @Test("closing the store commits the open batch")
    func closeCommitsTheBatch() async throws {
        try await withTemporarySQLitePath("batch-close") { path in
            let store = try await SQLStore.sqlite(path: path, synchronous: .full, laterFlush: noTimedCommit)
            let written = Rendezvous(count: 2)
            let closed = Rendezvous(count: 2)
            let answer = Task {
                try await store.durableWrites {
                    try await store.insertClient(sampleClient("a"))
                    await written.arrive()
                    await closed.arrive()
                }
            }
            await written.arrive()
            #expect(try clientsInFile(path).isEmpty)
            try await store.close()
            await closed.arrive()
            _ = await answer.result
            #expect(try clientsInFile(path) == ["a"])
        }
    }

    @Test("a batch nobody waits for yet (an answer still being made) is committed and flushed by the timed flush")
    func timedCommit() async throws {
        try await withTemporarySQLiteStore("batch-timed", laterFlush: .milliseconds(20)) { store, database, path in
            try await store.durableWrites {
                try await store.insertClient(sampleClient("slow"))
                var seen = false
                for _ in 0..<500 where !seen {
                    try await Task.sleep(for: .milliseconds(10))
                    seen = try clientsInFile(path) == ["slow"]
                }
                #expect(seen, "committed while its answer was still being made")
                #expect(database.commits.durable >= database.commits.made)
            }
        }
    }
}

/// Lets `count` tasks go on once all of them have arrived.
private actor Rendezvous {
    private let count: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { self.count = count }

    func arrive() async {
        arrived += 1
        if arrived == count {
            for continuation in waiting { continuation.resume() }
            waiting.removeAll()
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}
