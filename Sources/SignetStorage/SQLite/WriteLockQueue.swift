// Which processes wait for SQLite's write lock, told through a lock on a file beside the database.
import Foundation
import Synchronization

/// Lets a process waiting for SQLite's write lock say so, and the server see it.
///
/// Under steady load the server's open batch (``WriteBatch``) holds SQLite's write lock almost
/// all the time, and SQLite queues nobody: a `signet` command trying now and then would rarely
/// find it free. So a process whose write waits for another process's lock holds a shared lock
/// on the first byte of `<database>-waiting` for as long as it waits, and the server looks for
/// such a lock (`F_GETLK`) before it opens a batch: while there is one, it opens none, and the
/// waiting process gets its turn at the next commit. `fcntl` locks belong to a process, so the
/// server does not see its own waits, and one that dies lets go of its lock. A server gives way
/// for at most half a second at a time, so a process stopped while it waits cannot stop the
/// server's writes. The file is created empty, readable by its owner only; run the commands as
/// the server's user (docs/operations.md), and do not remove it while the server runs.
///
/// Written by hand: SQLite has no queue for its write lock, and Foundation no `fcntl` locks.
final class WriteLockQueue: Sendable {
    private let path: String
    private struct State {
        var descriptor: Int32 = -1
        /// This process's writes now waiting.
        var waiting = 0
    }
    private let state = Mutex(State())

    /// - Parameter databasePath: the SQLite file; the lock is on `<databasePath>-waiting`.
    init(databasePath: String) { path = databasePath + "-waiting" }

    deinit {
        state.withLock { state in
            if state.descriptor >= 0 { close(state.descriptor) }
        }
    }

    /// Marks one of this process's writes as waiting, until ``leave()``. Best effort: without
    /// the file (a read-only folder) the write waits as before, unannounced.
    func join() {
        state.withLock { state in
            state.waiting += 1
            guard state.waiting == 1, let descriptor = Self.open(path, &state) else { return }
            _ = Self.lock(descriptor, type: F_RDLCK)
        }
    }

    /// Ends a wait marked by ``join()``.
    func leave() {
        state.withLock { state in
            state.waiting -= 1
            guard state.waiting == 0, state.descriptor >= 0 else { return }
            _ = Self.lock(state.descriptor, type: F_UNLCK)
        }
    }

    /// Whether another process's write waits for the write lock now.
    var othersWait: Bool {
        state.withLock { state in
            guard let descriptor = Self.open(path, &state) else { return false }
            var query = Self.firstByte(F_WRLCK)
            guard fcntl(descriptor, F_GETLK, &query) == 0 else { return false }
            return query.l_type != Int16(F_UNLCK)
        }
    }

    /// Opens the file once: read and write, created if needed, else read only (enough for a
    /// shared lock and for looking), else never again (`-2`: a folder this process cannot write,
    /// a file another user made; then waits are not announced, and the server does not look).
    private static func open(_ path: String, _ state: inout State) -> Int32? {
        if state.descriptor == -1 {
            state.descriptor = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            if state.descriptor < 0 { state.descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC) }
            if state.descriptor < 0 { state.descriptor = -2 }
        }
        return state.descriptor >= 0 ? state.descriptor : nil
    }

    private static func lock(_ descriptor: Int32, type: Int32) -> Bool {
        var request = firstByte(type)
        return fcntl(descriptor, F_SETLK, &request) == 0
    }

    /// A lock of `type` on the file's first byte, the one the waits are told through.
    private static func firstByte(_ type: Int32) -> flock {
        var range = flock()
        range.l_type = Int16(type)
        range.l_whence = Int16(SEEK_SET)
        range.l_start = 0
        range.l_len = 1
        return range
    }
}
