import Foundation
import SignetCore
import SignetServer
@testable import SignetStorage
import Synchronization
import Testing

/// A process whose write waits for SQLite's write lock says so through a lock on
/// `<database>-waiting`, and a server gives way to it: it opens no batch while that lock is held
/// (Sources/SignetStorage/SQLite/WriteLockQueue.swift). `fcntl` locks belong to a process, so
/// the other process here is a Python one.
@Suite("SQLite: a server gives way to another process's waiting write")
struct WriteLockQueueTests {
    /// Starts a Python process that holds a shared lock on the first byte of `path` until the
    /// file `release` exists, and returns once it holds it.
    private func holdWaitingLock(_ path: String, until release: String) throws -> Process {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = [
            "python3", "-c",
            """
            import fcntl, os, sys, time
            f = open(sys.argv[1], 'a+')
            fcntl.lockf(f, fcntl.LOCK_SH, 1, 0, os.SEEK_SET)
            open(sys.argv[1] + '.held', 'w').close()
            while not os.path.exists(sys.argv[2]):
                time.sleep(0.01)
            """,
            path, release,
        ]
        try python.run()
        // Polled for up to 30 s so that a slow machine cannot fail it.
        for _ in 0..<3000 where !FileManager.default.fileExists(atPath: path + ".held") { Thread.sleep(forTimeInterval: 0.01) }
        return python
    }

    @Test("another process's wait is seen; this process's own is not")
    func othersWaitIsAnotherProcess() async throws {
        try await withTemporarySQLitePath("queue-seen") { path in
            let queue = WriteLockQueue(databasePath: path)
            #expect(!queue.othersWait)
            queue.join()
            #expect(!queue.othersWait, "fcntl locks belong to a process: its own wait is not another's")
            queue.leave()
            let release = path + ".release"
            let python = try holdWaitingLock(path + "-waiting", until: release)
            #expect(queue.othersWait)
            FileManager.default.createFile(atPath: release, contents: nil)
            python.waitUntilExit()
            #expect(!queue.othersWait)
        }
    }

    @Test("while another process's write waits, a server's answer that writes opens no batch and waits; it goes on once that process stops waiting")
    func serverGivesWay() async throws {
        try await withTemporarySQLiteStore("queue-gives-way", laterFlush: .seconds(3600)) { store, database, path in
            let release = path + ".release"
            let python = try holdWaitingLock(path + "-waiting", until: release)
            let done = DoneFlag()
            let answer = Task {
                try await store.durableWrites {
                    try await store.insertClient(ClientRecord(id: "after", name: "after", authMethod: .none, redirectURIs: ["com.example.app:/cb"], createdAt: Date()))
                }
                done.set()
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(!done.isSet, "it gives way")
            #expect(!database.hasOpenBatch)
            FileManager.default.createFile(atPath: release, contents: nil)
            python.waitUntilExit()
            try await answer.value
            #expect(try await store.client(id: "after") != nil)
        }
    }
}

/// Set once an answer is given.
private final class DoneFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
