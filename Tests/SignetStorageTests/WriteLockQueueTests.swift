import Foundation
import SignetCore
import SignetServer
@testable import SignetStorage
import Synchronization
import SignetTesting
import Testing

/// A process whose write waits for SQLite's write lock says so through a lock on
/// `<database>-waiting`, and a server gives way to it: it opens no batch while that lock is held
/// (Sources/SignetStorage/SQLite/WriteLockQueue.swift). `fcntl` locks belong to a process, so
/// the other process here is a Python one.
@Suite("SQLite: a server gives way to another process's waiting write")
struct WriteLockQueueTests {
    /// Starts a Python process that holds a shared lock on the first byte of `path` until the
    /// file `release` exists, and returns once it holds it.
    private func holdWaitingLock(_ path: String, until release: String) throws -> ChildProcess {
        let python = try ChildProcess.start(
            "/usr/bin/env",
            [
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
            ])
        try waitFor(path + ".held", from: python)
        return python
    }

    /// Returns once `marker` exists (polled for up to 30 s, so that a slow machine cannot fail
    /// it); throws at once if `process` ended first (no `python3`, say).
    private func waitFor(_ marker: String, from process: ChildProcess) throws {
        for _ in 0..<3000 where !FileManager.default.fileExists(atPath: marker) {
            try #require(process.isRunning, "the helper process ended early (is python3 installed?)")
            Thread.sleep(forTimeInterval: 0.01)
        }
        try #require(FileManager.default.fileExists(atPath: marker))
    }

    @Test(
        "a write that meets another process's write lock says it waits, until it is written: that process sees the wait, and a write that waits is not announced after it is written"
    )
    func waitingWriteIsAnnounced() async throws {
        try await withTemporarySQLiteStore("queue-announced", laterFlush: .seconds(3600)) { store, _, path in
            // Another process: takes SQLite's write lock, waits until it sees a write waiting for
            // it (a shared lock on byte 0 of -waiting), says so, and lets go.
            let python = try ChildProcess.start(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    """
                    import fcntl, os, sqlite3, struct, sys, time
                    db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
                    db.execute('BEGIN IMMEDIATE')
                    open(sys.argv[1] + '.locked', 'w').close()
                    waiting = open(sys.argv[1] + '-waiting', 'a+')
                    seen = False
                    for _ in range(3000):
                        query = struct.pack('hhqqi', fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0)
                        answer = fcntl.fcntl(waiting.fileno(), fcntl.F_GETLK, query)
                        if struct.unpack('hhqqi', answer)[0] != fcntl.F_UNLCK:
                            seen = True
                            break
                        time.sleep(0.01)
                    open(sys.argv[1] + '.seen', 'w').write('yes' if seen else 'no')
                    db.execute('COMMIT')
                    """,
                    path,
                ])
            try waitFor(path + ".locked", from: python)
            try await store.durableWrites {
                try await store.insertClient(sampleClient("waited"))
            }
            python.waitUntilExit()
            #expect(try String(contentsOfFile: path + ".seen", encoding: .utf8) == "yes", "the other process saw the write waiting")
            #expect(!WriteLockQueue(databasePath: path + ".elsewhere").othersWait)
            // Written: the wait is no longer announced (looked at from another process).
            let check = try ChildProcess.start(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    """
                    import fcntl, os, struct, sys
                    waiting = open(sys.argv[1] + '-waiting', 'a+')
                    query = struct.pack('hhqqi', fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0)
                    answer = fcntl.fcntl(waiting.fileno(), fcntl.F_GETLK, query)
                    sys.exit(0 if struct.unpack('hhqqi', answer)[0] == fcntl.F_UNLCK else 1)
                    """,
                    path,
                ])
            #expect(check.waitUntilExit() == 0, "no wait announced once written")
        }
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
            #expect(FileManager.default.createFile(atPath: release, contents: nil), "the other process told to let go")
            python.waitUntilExit()
            #expect(!queue.othersWait)
        }
    }

    @Test(
        "while another process's write waits, a server's answer that writes opens no batch and waits, for half a second at most: a process stopped while it waits does not stop the server"
    )
    func serverGivesWay() async throws {
        try await withTemporarySQLiteStore("queue-gives-way", laterFlush: .seconds(3600)) { store, database, path in
            let release = path + ".release"
            let python = try holdWaitingLock(path + "-waiting", until: release)
            defer {
                _ = FileManager.default.createFile(atPath: release, contents: nil)
                python.waitUntilExit()
            }
            let done = DoneFlag()
            let answer = Task {
                try await store.durableWrites {
                    try await store.insertClient(sampleClient("after"))
                }
                done.set()
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(!done.isSet, "it gives way")
            #expect(!database.hasOpenBatch)
            // The other process still waits (stopped, say): past the limit the server writes.
            try await answer.value
            #expect(WriteLockQueue(databasePath: path).othersWait)
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
