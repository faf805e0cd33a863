// Puts committed writes on disk, one flush for all who wait.
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization
import VaporCSQLite

/// Commits are numbered (``commitCounter``); ``waitUntilDurable(_:)`` returns once the
/// write-ahead log is flushed past a commit. Everyone waiting when a flush starts shares it (a
/// group fsync), so a request that commits four times waits for one fsync, not four, and so do
/// its concurrent neighbours.
///
/// Who flushes: a request that needs a flush when none is running makes it itself, on its own
/// thread, as a committing PostgreSQL backend flushes the log itself. Handing it to a thread of
/// its own and being woken afterwards cost three more thread switches per flush, about a tenth
/// of a token request's CPU (docs/performance.md). Those who come while a flush runs wait, and
/// are resumed by it when it covered their commits, else by the next flush, made on this
/// flusher's own thread. Only while flushes have been quick (``inlineFlushLimit``): on a slow
/// disk every flush is made on the flusher's thread, so no event loop is held for long.
/// Checkpoints are always made on the flusher's thread.
///
/// It flushes through a connection of its own: an fsync of the log file is one of the file, not
/// of a descriptor, so it covers what every connection wrote to it. One flush or checkpoint uses
/// that connection at a time (`connectionInUse`).
///
/// Written by hand: neither SQLiteNIO nor SQLiteKit separates committing from flushing.
final class SQLiteFlusher: @unchecked Sendable {
    // @unchecked: `connection` is used only by whoever set `connectionInUse` (the flusher thread,
    // or a request flushing itself), and by `init` before the thread starts; the rest of the
    // state is guarded by `lock`.
    private let connection: SQLiteConnectionHandle
    /// The number of the latest commit, counted by the writer after each one.
    let commitCounter = Atomic<Int>(0)
    private let lock = NIOLock()
    private var waiters: [Waiter] = []
    private var synced = 0
    private var closed = false
    private var connectionInUse = false
    /// How long recent flushes took (a moving average, in nanoseconds).
    private var recentFlushNanoseconds: Int64 = 0
    private var flushesInPlace = 0
    private var flushesOnThread = 0
    /// The first flush that failed. It stays: after a failed fsync the kernel may have dropped the
    /// pages, so no later flush may report commits durable (as PostgreSQL's `data_sync_retry=off`).
    private var failure: SQLiteFailure?
    private var checkpointDue = false
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Runs its argument while no commit can be made (under the writer's lock).
    private let holdingWriter: @Sendable (() -> Void) -> Void

    /// Flushes are made by the requests that wait for them only while they take less than this
    /// on average: the request's thread, an event loop, answers nothing else meanwhile.
    static let inlineFlushLimit: Int64 = 1_000_000

    /// - Parameter holdingWriter: runs its argument while no commit can be made; the last step
    ///   of a checkpoint runs in it.
    init(connection: SQLiteConnectionHandle, holdingWriter: @escaping @Sendable (() -> Void) -> Void) {
        self.connection = connection
        self.holdingWriter = holdingWriter
        let thread = Thread { [self] in runLoop() }
        thread.name = "signet-sqlite-flush"
        thread.start()
    }

    /// Returns once the commit numbered `commit` (and every earlier one) is on disk.
    func waitUntilDurable(_ commit: Int) async throws {
        enum Verdict { case done, lead, queued, failed(SQLiteFailure) }
        // Nobody flushing and nobody waiting: this request flushes, here.
        let start: Verdict = lock.withLock {
            if let failure { return .failed(failure) }
            guard synced < commit else { return .done }
            guard !closed, !connectionInUse, waiters.isEmpty, recentFlushNanoseconds < Self.inlineFlushLimit else { return .queued }
            connectionInUse = true
            flushesInPlace += 1
            return .lead
        }
        switch start {
        case .done: return
        case .failed(let failure): throw failure
        case .lead: return try flushHere()
        case .queued: break
        }
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
            let verdict: Verdict = lock.withLock {
                if let failure { return .failed(failure) }
                guard synced < commit else { return .done }
                guard !closed else { return .failed(SQLiteFailure(code: SQLITE_MISUSE, message: "the store is closed")) }
                waiters.append(Waiter(commit: commit, continuation: continuation, eventLoop: MultiThreadedEventLoopGroup.currentEventLoop))
                return .queued
            }
            switch verdict {
            case .done, .lead: continuation.resume()
            case .failed(let failure): continuation.resume(throwing: failure)
            case .queued: wakeUp.signal()
            }
        }
    }

    /// A flush made by the request that waits for it. It resumes those who queued meanwhile and
    /// whose commits it covered; the flusher's thread takes any others, and a checkpoint asked
    /// for meanwhile, or the close.
    private func flushHere() throws {
        let covered = commitCounter.load(ordering: .acquiring)
        let outcome = timedSync()
        let (ready, more): ([Waiter], Bool) = lock.withLock {
            connectionInUse = false
            guard case .success = outcome else { return ([], true) }
            synced = max(synced, covered)
            let ready = waiters.filter { $0.commit <= covered }
            waiters.removeAll { $0.commit <= covered }
            return (ready, !waiters.isEmpty || checkpointDue || closed)
        }
        for waiter in ready { waiter.resume(with: .success(())) }
        if more { wakeUp.signal() }
        if case .failure(let failure) = outcome {
            latch(failure, during: "a flush to disk")
            throw failure
        }
    }

    /// Syncs the log and adds how long it took to the moving average.
    private func timedSync() -> Result<Void, SQLiteFailure> {
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome: Result<Void, SQLiteFailure>
        do {
            try connection.syncLog()
            outcome = .success(())
        } catch {
            outcome = .failure((error as? SQLiteFailure) ?? SQLiteFailure(code: SQLITE_IOERR, message: "\(error)"))
        }
        let took = Int64(clamping: DispatchTime.now().uptimeNanoseconds &- started)
        lock.withLock { recentFlushNanoseconds = (recentFlushNanoseconds * 7 + took) / 8 }
        return outcome
    }

    /// The latest commit known to be on disk.
    var durableCommit: Int { lock.withLock { synced } }

    /// How many flushes the waiting requests made themselves and the flusher's thread made (for tests).
    var flushCounts: (inPlace: Int, onThread: Int) { lock.withLock { (flushesInPlace, flushesOnThread) } }

    /// Sets how long recent flushes took, as if the disk had been that quick or slow (for tests).
    func assumeRecentFlushes(took nanoseconds: Int64) { lock.withLock { recentFlushNanoseconds = nanoseconds } }

    /// Why writes can no longer be made durable, once a flush has failed (for `/health/ready`).
    var flushFailure: String? { lock.withLock { failure?.description } }

    /// Asks for a checkpoint (the log copied into the database, so it stops growing), made on
    /// this thread, not on the writer's.
    func requestCheckpoint() {
        lock.withLock { checkpointDue = true }
        wakeUp.signal()
    }

    /// Flushes for those still waiting, then closes its connection.
    func close() {
        let first = lock.withLock {
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        wakeUp.signal()
        finished.wait()
    }

    private func runLoop() {
        while true {
            wakeUp.wait()
            // While a request flushes, the connection is its; it wakes this thread again when done.
            let turn: (waiting: [Waiter], stop: Bool, checkpoint: Bool)? = lock.withLock {
                guard !connectionInUse else { return nil }
                connectionInUse = true
                defer {
                    waiters.removeAll(keepingCapacity: true)
                    checkpointDue = false
                }
                return (waiters, closed, checkpointDue)
            }
            guard let turn else { continue }
            if !turn.waiting.isEmpty { flush(for: turn.waiting) }
            if turn.checkpoint { copyLogIntoDatabase() }
            if turn.stop {
                connection.close()
                finished.signal()
                return
            }
            lock.withLock { connectionInUse = false }
        }
    }

    /// A checkpoint in two steps, so that the log is copied whole and the next write starts it
    /// again from its beginning. Under steady load a checkpoint made beside the writer never
    /// catches up with it: commits land while it copies, the log is never copied whole, and it
    /// grew by about 50 MB a second in `signet bench`, each new block costing the kernel more to
    /// write than an old one. So the bulk is copied beside the writer, and what came in meanwhile
    /// (a few pages) with the writer's lock held: writes wait at most for that step's two syncs
    /// (the log's, then the database file's), once every 256 commits. Passive both times: a reader
    /// still on older pages is not waited for, and the log starts again at a later checkpoint.
    ///
    /// A checkpoint syncs the log through this connection's file handle, the one flushes use, and
    /// the kernel reports a failed write-back once per handle: an I/O error here is latched as a
    /// failed flush, so no later flush can report commits durable whose pages were dropped.
    private func copyLogIntoDatabase() {
        var failure: SQLiteFailure?
        do { try connection.checkpointPassively() } catch { failure = error }
        if failure == nil {
            holdingWriter { [connection] in
                do throws(SQLiteFailure) { try connection.checkpointPassively() } catch { failure = error }
            }
        }
        if let failure, failure.code & 0xFF == SQLITE_IOERR { latch(failure, during: "a checkpoint") }
    }

    private func flush(for waiting: [Waiter]) {
        // Every commit counted before the flush starts has written its pages to the log.
        let covered = commitCounter.load(ordering: .acquiring)
        lock.withLock { flushesOnThread += 1 }
        if case .failure(let failure) = timedSync() {
            latch(failure, during: "a flush to disk", stranding: waiting)
            return
        }
        lock.withLock { synced = max(synced, covered) }
        for waiter in waiting { waiter.resume(with: .success(())) }
    }

    /// Keeps the first failure for good and fails `waiting` and everyone queued since. Internal
    /// for tests, which cannot make a disk fail.
    func latch(_ failure: SQLiteFailure, during what: String, stranding waiting: [Waiter] = []) {
        let stranded = lock.withLock {
            self.failure = self.failure ?? SQLiteFailure(code: failure.code, message: "\(what) failed (\(failure.message)); restart Signet")
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in waiting + stranded { waiter.resume(with: .failure(failure)) }
    }

    /// Throws the latched failure, if a flush or a checkpoint has failed: writes made since may
    /// never reach the disk.
    func checkNotFailed() throws {
        if let failure = lock.withLock({ failure }) { throw failure }
    }

    /// A request waiting for a flush, and the event loop it waits from (`nil` off the loops).
    ///
    /// It is resumed on that loop: resumed from the flusher's thread, its task would go to
    /// whichever loop came next, and its answer, written on its connection's loop, would hop back
    /// there, one more thread woken per answer.
    struct Waiter {
        let commit: Int
        let continuation: UnsafeContinuation<Void, any Error>
        let eventLoop: (any EventLoop)?

        func resume(with result: Result<Void, any Error>) {
            guard let eventLoop else { return continuation.resume(with: result) }
            eventLoop.execute { continuation.resume(with: result) }
        }
    }
}
