// The writer's open transaction: the writes of concurrent requests, committed once per flush.
import Dispatch
import VaporCSQLite

/// With `waitsForDisk` (`sqlite.synchronous: full`) the writes of requests are not committed one
/// by one. The first opens a transaction on the writer connection (`BEGIN IMMEDIATE`), those
/// after it join it, and it is committed once, with the queued ``DeferredWrites``, just before
/// the flush their answers wait for (or by an answer that waits for no flush, before it is
/// given; at the latest ``InlineSQLiteDatabase/laterFlush`` after it opened, since the write
/// lock it holds keeps other processes waiting). A commit rewrote the
/// last pages of a table and its indexes to the log and took and released its locks; one per
/// flush instead of four per token request (docs/performance.md, fifteenth part).
///
/// Each statement is still atomic on its own: a failed constraint ends the statement only (SQLite
/// keeps the transaction), so the store's one-statement single-use rules hold as before. A failure
/// that ends the whole transaction (a full disk, an I/O error) drops the writes of others with it:
/// it is latched as a failed flush, so no answer counting on them is given.
///
/// The open batch is seen only on the writer connection: a request that wrote into it reads
/// there (``InlineSQLiteDatabase``), and one that read from it has it committed before its
/// answer. Commits are numbered as before (``SQLiteFlusher/commitCounter``); the open batch is
/// the next number, and a write in it waits for that commit. While another process's write waits
/// for SQLite's write lock (``WriteLockQueue``), no batch is opened, so it gets the lock at the
/// next commit.
///
/// Written by hand: neither SQLiteNIO nor SQLiteKit shares a transaction between callers.
extension SQLiteFlusher {
    /// Runs `sql` on `writer` (held by the caller) in the open batch, opening one if none is
    /// open; returns its rows and the number of the commit that will end the batch. Another
    /// process's write lock (`SQLITE_BUSY`) at the opening is thrown with nothing done.
    ///
    /// - Parameter mayGiveWay: whether it opens no batch while another process's write waits
    ///   for the lock (``WriteLockQueue``); `false` for a write that waits in the queue itself, so
    ///   that two waiting processes never give way to each other.
    func runInBatch(_ sql: String, _ values: [SQLiteValue], on writer: SQLiteConnectionHandle, mayGiveWay: Bool = true) throws -> (SQLiteResult, Int)
    {
        try checkBatchIntact(on: writer)
        // Once a flush has failed no answer is given; nothing more is written for them either.
        try checkNotFailed()
        if writer.isAutocommit, mayGiveWay, givesWay() {
            // Another process's write waits for the lock: it goes first, at the next commit.
            throw SQLiteFailure(code: SQLiteFailure.givingWay, message: "another process's write goes first")
        }
        guard writer.isAutocommit || batchIsOpen.load(ordering: .relaxed) else {
            // A transaction that is no batch (a migration's, or one a failed rollback left).
            throw SQLiteFailure(code: SQLITE_MISUSE, message: "the writer is inside a transaction of its own")
        }
        let joined = !writer.isAutocommit
        try openBatch(on: writer)
        let commit = commitCounter.load(ordering: .relaxed) + 1
        do {
            return (try writer.run(sql, binds: values, mayOpenTransaction: true), commit)
        } catch {
            // SQLite ended the transaction: a batch this statement opened held nothing else.
            if writer.isAutocommit {
                if joined { droppedBatch(error, during: Self.sharedTransactionEnded) } else { batchIsOpen.store(false, ordering: .releasing) }
            }
            throw error
        }
    }

    /// What failed when a statement, a write's or a read's, ended the open batch.
    private static let sharedTransactionEnded = "a statement that ended the transaction it shared with other requests"

    /// The number of the commit that will end the open batch, when one is open on `writer` (held
    /// by the caller).
    func openBatchCommit(on writer: SQLiteConnectionHandle) throws -> Int? {
        try checkBatchIntact(on: writer)
        return batchIsOpen.load(ordering: .relaxed) ? commitCounter.load(ordering: .relaxed) + 1 : nil
    }

    /// Whether to open no batch now: another process's write waits for the lock, and has not
    /// been given way to for longer than ``givingWayLimit`` (a process stopped while it waits,
    /// by a debugger or `docker pause`, must not stop the server's writes).
    private func givesWay() -> Bool {
        guard let writeLockQueue, writeLockQueue.othersWait else {
            givingWaySince.store(0, ordering: .relaxed)
            return false
        }
        let now = DispatchTime.now().uptimeNanoseconds
        let since = givingWaySince.load(ordering: .relaxed)
        if since == 0 { givingWaySince.store(now, ordering: .relaxed) }
        return since == 0 || now - since < Self.givingWayLimit
    }

    /// How long, in nanoseconds, a server gives way to a waiting process at most: longer than a
    /// batch stays open (``InlineSQLiteDatabase/laterFlush``), so the waiting write meets a commit.
    static let givingWayLimit: UInt64 = 500_000_000

    /// Throws, latched as a failed flush, when the open batch has ended without its commit:
    /// SQLite rolls a transaction back by itself after some failures, of reads too (an I/O
    /// error, a full disk while spilling its pages), and a closed connection ends it.
    func checkBatchIntact(on writer: SQLiteConnectionHandle) throws {
        guard batchIsOpen.load(ordering: .relaxed), writer.isAutocommit else { return }
        let failure = SQLiteFailure(code: SQLITE_ABORT, message: "the transaction was ended without its commit")
        droppedBatch(failure, during: Self.sharedTransactionEnded)
        throw failure
    }

    /// Commits the open batch on `writer` (held by the caller), with the deferred statements
    /// queued so far, and counts the commit. With none open and none queued, nothing. Another
    /// process's write lock, met opening a batch for the queued statements, is thrown with
    /// nothing done (they stay queued); any other failure rolls the batch back, is latched as a
    /// failed flush, and is thrown.
    ///
    /// - Parameter countsTowardCheckpoint: `false` for the checkpoint's own commit.
    func commitBatch(on writer: SQLiteConnectionHandle, countsTowardCheckpoint: Bool = true) throws {
        try checkBatchIntact(on: writer)
        guard writer.isOpen else {
            guard deferred.isEmpty else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the store is closed") }
            return
        }
        if !deferred.isEmpty {
            try openBatch(on: writer)
            do {
                try deferred.run(on: writer)
            } catch {
                droppedBatch(error, during: "writing the audit trail", rollingBackOn: writer)
                throw error
            }
        }
        guard batchIsOpen.load(ordering: .relaxed) else { return }
        do {
            try writer.execute("COMMIT")
        } catch {
            droppedBatch(error, during: "a commit", rollingBackOn: writer)
            throw error
        }
        batchIsOpen.store(false, ordering: .releasing)
        deferred.markCommitted()
        let commit = commitCounter.add(1, ordering: .releasing).newValue
        if countsTowardCheckpoint { noteCommit(commit) }
    }

    private func openBatch(on writer: SQLiteConnectionHandle) throws {
        guard writer.isAutocommit else { return }
        _ = try writer.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)
        batchIsOpen.store(true, ordering: .releasing)
        // The timed flush commits it, if nobody does before.
        commitMade()
    }

    /// The open batch ended without its commit: what it held can never be on disk. Rolls back
    /// what SQLite left open on `writer`, if given.
    private func droppedBatch(_ error: any Error, during what: String, rollingBackOn writer: SQLiteConnectionHandle? = nil) {
        if let writer, !writer.isAutocommit { try? writer.execute("ROLLBACK") }
        // Latched first: an answer that finds no batch open then finds the failure.
        defer { batchIsOpen.store(false, ordering: .releasing) }
        latch((error as? SQLiteFailure) ?? SQLiteFailure(code: SQLITE_IOERR, message: "\(error)"), during: what)
    }
}

extension SQLiteFailure {
    /// `SQLITE_BUSY` with an extended code of Signet's own: no batch was opened because another
    /// process's write waits for the lock. Retried as a busy refusal, but not itself a wait for
    /// another process (``WriteLockQueue``); a write that waits in the queue never gives way, so
    /// two waiting processes do not give way to each other.
    static let givingWay: Int32 = SQLITE_BUSY | (0x40 << 8)

    /// Whether this is ``givingWay``.
    var isGivingWay: Bool { code == Self.givingWay }
}
