// The thread that puts committed writes on disk, one flush for all who wait.
import Foundation
import NIOConcurrencyHelpers
import Synchronization
import VaporCSQLite

/// Commits are numbered (``commitCounter``); ``waitUntilDurable(_:)`` returns once the
/// write-ahead log is flushed past a commit. Everyone waiting when a flush starts shares it (a
/// group fsync), so a request that commits four times waits for one fsync, not four, and so do
/// its concurrent neighbours. The flush runs on this dedicated thread, never on the threads that
/// answer requests.
///
/// It flushes through a connection of its own: an fsync of the log file is one of the file, not
/// of a descriptor, so it covers what every connection wrote to it.
///
/// With a `laterFlush` delay (`sqlite.synchronous: normal`, where nobody waits), a commit is
/// flushed about that long after it is made (``commitMade()``; later by an fsync or a checkpoint
/// already under way), as PostgreSQL's asynchronous commit flushes every `wal_writer_delay`: a
/// power loss then undoes about that moment of commits, not everything since the last checkpoint
/// that the kernel had not yet written back.
///
/// Before each flush it commits the writer's open batch (``WriteBatch``) with the
/// ``DeferredWrites`` queued so far (the audit events of answers waiting for it), so they are on
/// disk with the answers' own writes.
///
/// Written by hand: neither SQLiteNIO nor SQLiteKit separates committing from flushing.
final class SQLiteFlusher: @unchecked Sendable {
    // @unchecked: `connection` is touched only by the flusher thread (and by `init` before it
    // starts); the waiters and `synced` are guarded by `lock`.
    private let connection: SQLiteConnectionHandle
    /// The number of the latest commit, counted by the writer after each one.
    let commitCounter = Atomic<Int>(0)
    private let lock = NIOLock()
    private var waiters: [Waiter] = []
    private var synced = 0
    /// The latest deferred statement's ticket known to be on disk.
    private var syncedDeferred = 0
    private var closed = false
    /// The first flush that failed. It stays: after a failed fsync the kernel may have dropped the
    /// pages, so no later flush may report commits durable (as PostgreSQL's `data_sync_retry=off`).
    private var failure: SQLiteFailure?
    /// Whether ``failure`` is set, read without the lock (set under it, never cleared).
    private let hasFailed = Atomic<Bool>(false)
    private var checkpointDue = false
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// How long, in milliseconds, the deferred statements wait for another process's write lock
    /// before those waiting for them fail (``InlineSQLiteDatabase/BusyWait``); tests shorten it.
    let deferredPatience = Atomic<Int64>(InlineSQLiteDatabase.BusyWait.patience)
    /// Runs its argument with the writer connection, while no other commit can be made (under
    /// the writer's lock).
    private let holdingWriter: @Sendable ((SQLiteConnectionHandle) throws -> Void) throws -> Void
    /// The statements written before each flush.
    let deferred = DeferredWrites()
    /// Whether the writer has a batch open (``WriteBatch``); changed under the writer's lock.
    let batchIsOpen = Atomic<Bool>(false)
    /// Where other processes say their writes wait for the write lock; `nil` for none.
    let writeLockQueue: WriteLockQueue?
    /// Since when (uptime, in nanoseconds) the writer gives way to another process; 0 for not.
    let givingWaySince = Atomic<UInt64>(0)
    /// How long after a commit nobody waits for it is flushed anyway; `nil`: not until someone waits.
    private let laterFlush: DispatchTimeInterval?
    /// How often, in commits, the log is copied into the database.
    private let commitsPerCheckpoint: Int
    /// Whether a commit made since the last flush is waiting for the timed flush.
    private let timedFlushPending = Atomic<Bool>(false)

    /// - Parameter holdingWriter: runs its argument with the writer connection while no other
    ///   commit can be made; the deferred statements and the last step of a checkpoint run in it.
    /// - Parameter laterFlush: how long after ``commitMade()`` its commit is flushed without
    ///   anyone waiting for it; `nil` for never (commits are flushed when someone waits).
    /// - Parameter commitsPerCheckpoint: how often, in commits, the log is copied into the database.
    /// - Parameter writeLockQueue: where other processes say their writes wait for the write lock.
    init(
        connection: SQLiteConnectionHandle, laterFlush: Duration? = nil, commitsPerCheckpoint: Int = 256, writeLockQueue: WriteLockQueue? = nil,
        holdingWriter: @escaping @Sendable ((SQLiteConnectionHandle) throws -> Void) throws -> Void
    ) {
        self.connection = connection
        self.holdingWriter = holdingWriter
        self.commitsPerCheckpoint = commitsPerCheckpoint
        self.writeLockQueue = writeLockQueue
        self.laterFlush = laterFlush.map { .nanoseconds(Int($0 / .nanoseconds(1))) }
        let thread = Thread { [self] in runLoop() }
        thread.name = "signet-sqlite-flush"
        thread.start()
    }

    /// Returns once the commit numbered `commit` (and every earlier one) is on disk, and the
    /// deferred statement with the ticket `deferred` (and every earlier one).
    func waitUntilDurable(_ commit: Int, deferred ticket: Int = 0) async throws {
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
            enum Verdict { case done, queued, failed(SQLiteFailure) }
            let verdict: Verdict = lock.withLock {
                if let failure { return .failed(failure) }
                guard synced < commit || syncedDeferred < ticket else { return .done }
                guard !closed else { return .failed(SQLiteFailure(code: SQLITE_MISUSE, message: "the store is closed")) }
                waiters.append(Waiter(commit: commit, deferred: ticket, continuation: continuation))
                return .queued
            }
            switch verdict {
            case .done: continuation.resume()
            case .failed(let failure): continuation.resume(throwing: failure)
            case .queued: wakeUp.signal()
            }
        }
    }

    /// Tells the flusher that a commit nobody waits for was made (counted in ``commitCounter``):
    /// with a `laterFlush` delay it is flushed about that long afterwards (and at close); without
    /// one, nothing.
    func commitMade() {
        guard laterFlush != nil else { return }
        // Only the first commit since the last flush wakes the thread; the flush covers the rest.
        if !timedFlushPending.exchange(true, ordering: .acquiringAndReleasing) { wakeUp.signal() }
    }

    /// Asks for a checkpoint when the commit numbered `commit` is due one.
    func noteCommit(_ commit: Int) {
        if commit % commitsPerCheckpoint == 0 { requestCheckpoint() }
    }

    /// The latest commit known to be on disk.
    var durableCommit: Int { lock.withLock { synced } }

    /// Why writes can no longer be made durable, once a flush has failed (for `/health/ready`).
    var flushFailure: String? { lock.withLock { failure?.description } }

    /// Asks for a checkpoint (the log copied into the database, so it stops growing), made on
    /// this thread, not on the writer's.
    func requestCheckpoint() {
        lock.withLock { checkpointDue = true }
        wakeUp.signal()
    }

    /// Flushes every commit made (for those still waiting, and the rest), then closes its connection.
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
        var timedFlushAt: DispatchTime?
        while true {
            if let due = timedFlushAt {
                if wakeUp.wait(timeout: due) == .timedOut {
                    timedFlushAt = nil
                    flushPendingCommits()
                    continue
                }
            } else {
                wakeUp.wait()
            }
            let (waiting, stop, checkpoint) = lock.withLock {
                defer {
                    waiters.removeAll(keepingCapacity: true)
                    checkpointDue = false
                }
                return (waiters, closed, checkpointDue)
            }
            if !waiting.isEmpty { flush(for: waiting) }
            if checkpoint { copyLogIntoDatabase() }
            if stop {
                // Every commit made is on disk when the store is closed, waited for or not.
                flushPendingCommits()
                connection.close()
                finished.signal()
                return
            }
            if timedFlushAt == nil, let laterFlush, timedFlushPending.load(ordering: .acquiring) { timedFlushAt = .now() + laterFlush }
        }
    }

    /// The timed flush, and the last one at close: every commit counted so far, if any is not yet on disk.
    private func flushPendingCommits() {
        // Cleared before the count is read, by a read-modify-write as the writers' flagging is: a
        // commit counted after the count is read finds the flag cleared and flags a flush of its
        // own, and one whose flag this clears is counted in what is read (a plain store could be
        // seen by the writers only after the read).
        _ = timedFlushPending.exchange(false, ordering: .acquiringAndReleasing)
        // Statements that cannot be written now are written later; the commits made are flushed still.
        _ = commitOpenBatch()
        let counted = commitCounter.load(ordering: .acquiring)
        // After a failed flush, none reports commits durable (the kernel may have dropped pages).
        guard lock.withLock({ failure == nil && counted > synced }) else { return }
        _ = syncCountedCommits(during: "a timed flush to disk")
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
            try? holdingWriter { [connection] writer in
                // The open batch first: a log can start again only at the opening of a write
                // transaction, once it is copied whole, and under load one is open almost always.
                // Its commit is flushed by this checkpoint's sync of the log, and counted by the
                // next flush.
                try? commitBatch(on: writer, countsTowardCheckpoint: false)
                do throws(SQLiteFailure) { try connection.checkpointPassively() } catch { failure = error }
            }
        }
        if let failure, failure.code & 0xFF == SQLITE_IOERR { latch(failure, during: "a checkpoint") }
    }

    /// An answer waiting for the disk: what it waits for, and how to resume it.
    private struct Waiter {
        let commit: Int
        let deferred: Int
        let continuation: UnsafeContinuation<Void, any Error>
    }

    private func flush(for waiting: [Waiter]) {
        // Everyone waiting wrote into the open batch, or queued deferred statements, before they
        // waited: this commits them.
        let unwritten = commitOpenBatch()
        guard syncCountedCommits(during: "a flush to disk", stranding: waiting.map(\.continuation)) else { return }
        // Each is resumed only once what it waits for is on disk; a failure latched meanwhile
        // (by a write of the deferred statements elsewhere) fails everyone.
        let (failure, synced, syncedDeferred) = lock.withLock { (self.failure, self.synced, self.syncedDeferred) }
        for waiter in waiting {
            if let failure {
                waiter.continuation.resume(throwing: failure)
            } else if waiter.commit <= synced, waiter.deferred <= syncedDeferred {
                waiter.continuation.resume()
            } else {
                // Its deferred statements could not be written (another process's lock past the
                // patience, a closed store): the answer fails, as a write that could not be made.
                waiter.continuation.resume(throwing: unwritten ?? SQLiteFailure(code: SQLITE_MISUSE, message: "its audit events were not written"))
            }
        }
    }

    /// Commits the open batch with the deferred statements queued so far (before a flush, at
    /// close), under the writer's lock whenever a batch is open or a statement queued or being
    /// written, so that a batch another thread is committing is done first. While another process
    /// holds the write lock (met opening a batch for the queued statements) it waits, as a write
    /// does (``InlineSQLiteDatabase/BusyWait``, sleeping the calling thread: the flusher's own, or
    /// the closing one). Returns `nil` once committed, else why not: that lock still held after
    /// ``deferredPatience`` (the statements stay queued for the next flush or the close), a closed
    /// store, or a failure (latched by ``commitBatch(on:)``).
    func commitOpenBatch() -> SQLiteFailure? {
        guard !deferred.isSettled || batchIsOpen.load(ordering: .acquiring) else { return nil }
        var busy = InlineSQLiteDatabase.BusyWait(patience: deferredPatience.load(ordering: .relaxed))
        while true {
            do {
                try holdingWriter { try commitBatch(on: $0) }
                return nil
            } catch let failure as SQLiteFailure where failure.isBusy {
                guard let delay = busy.nextDelay() else { return failure }
                Thread.sleep(forTimeInterval: Double(delay) / 1000)
            } catch {
                return (error as? SQLiteFailure) ?? SQLiteFailure(code: SQLITE_IOERR, message: "\(error)")
            }
        }
    }

    /// Syncs the log and records every commit counted before the sync as on disk; on failure,
    /// latches it (failing `waiting` too) and returns `false`. The one flush both the waited-for
    /// and the timed flushes make.
    private func syncCountedCommits(during what: String, stranding waiting: [UnsafeContinuation<Void, any Error>] = []) -> Bool {
        // Every commit counted, and every deferred statement marked written, before the sync
        // starts has written its pages to the log: the sync covers them.
        let coveredDeferred = deferred.written
        let covered = commitCounter.load(ordering: .acquiring)
        do {
            try connection.syncLog()
        } catch {
            latch((error as? SQLiteFailure) ?? SQLiteFailure(code: SQLITE_IOERR, message: "\(error)"), during: what, stranding: waiting)
            return false
        }
        lock.withLock {
            // A failure latched meanwhile (elsewhere) stands: nothing is reported durable after it.
            guard failure == nil else { return }
            synced = max(synced, covered)
            syncedDeferred = max(syncedDeferred, coveredDeferred)
        }
        return true
    }

    /// Keeps the first failure for good and fails `waiting` and everyone queued since. Internal
    /// for tests, which cannot make a disk fail.
    func latch(_ failure: SQLiteFailure, during what: String, stranding waiting: [UnsafeContinuation<Void, any Error>] = []) {
        let stranded = lock.withLock {
            self.failure = self.failure ?? SQLiteFailure(code: failure.code, message: "\(what) failed (\(failure.message)); restart Signet")
            hasFailed.store(true, ordering: .releasing)
            defer { waiters.removeAll() }
            return waiters.map(\.continuation)
        }
        for waiter in waiting + stranded { waiter.resume(throwing: failure) }
    }

    /// Throws the latched failure, if a flush or a checkpoint has failed: writes made since may
    /// never reach the disk.
    func checkNotFailed() throws {
        // Without the lock while nothing has failed: every write and every answer asks.
        guard hasFailed.load(ordering: .acquiring) else { return }
        if let failure = lock.withLock({ failure }) { throw failure }
    }
}
