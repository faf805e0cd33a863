// SQLKit's database protocol over SQLite, running each statement in its caller.
import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SignetCore
import SignetStore
import SQLiteKit
import Synchronization
import VaporCSQLite

/// An `SQLDatabase` for an SQLite file in WAL mode, built for the store's short statements:
///
/// - every statement runs where it is called, with no hand-off to another thread, and every
///   connection keeps its statements prepared (``SQLiteConnectionHandle``);
/// - a statement that only reads runs on the writer connection when it is free (its page cache
///   stays valid across its own commits), else on one of a few reader connections (WAL lets
///   readers run beside the writer); one that writes runs on the one writer connection, under
///   its lock;
/// - a write meeting another process's write lock waits for it outside the writer's lock and
///   off the thread, trying again every 10 ms at most (5 s in all);
/// - commits do not flush. With `waitsForDisk` (`sqlite.synchronous: full`) nothing is reported
///   done before it is on disk: a write waits for the ``SQLiteFlusher``, except inside
///   ``durableWrites(_:)``, where the writes of a whole request wait for one flush at its end,
///   shared with its neighbours. Without it (`normal`) nobody waits, and the flusher puts each
///   commit on disk about ``laterFlush`` after it is made;
/// - with `waitsForDisk`, writes are not committed one by one: they join the writer's open
///   transaction, committed once before the flush (``WriteBatch``). A request that wrote into it
///   or read from it reads on the writer until it is committed;
/// - with `waitsForDisk`, an audit event of an answer that will wait for the disk is queued
///   (``writeDeferred(_:)``) and written with the others queued by the flusher just before the
///   flush that answer waits for, in one transaction; a read of the audit trail writes what is
///   queued first (``commitPendingWrites()``).
///
/// The store's queries are written once against SQLKit and run here unchanged. Transactions of
/// several statements are not offered through it: each statement is atomic on its own, which is
/// how the store is written (one-statement single-use rules), inside a batch too.
final class InlineSQLiteDatabase: SQLDatabase {
    let logger: Logger
    let eventLoop: any EventLoop
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    /// Whether writes wait for the disk (else for their commit only, as SQLite's `synchronous=NORMAL`).
    let waitsForDisk: Bool
    private let writer: SharedConnection
    private let readers: [SharedConnection]
    /// Internal, not private, so tests can make a flush fail.
    let flusher: SQLiteFlusher
    private let nextReader = Atomic<Int>(0)
    /// Where this process says its writes wait for another process's write lock.
    private let writeLockQueue: WriteLockQueue
    /// Writes waiting for another process's lock, which ``closeAfterWaitingWrites()`` lets finish.
    private let waitingWrites = Atomic<Int>(0)

    /// A connection and the lock it is used under.
    private final class SharedConnection: Sendable {
        let connection: Mutex<SQLiteConnectionHandle>
        init(_ connection: sending SQLiteConnectionHandle) { self.connection = Mutex(connection) }
    }

    /// Opens (creating if needed) the SQLite file at `path` in WAL mode.
    ///
    /// - Parameter waitsForDisk: whether a write is reported done only once it is on disk.
    /// - Parameter readers: how many reader connections (reads beyond that many wait for one).
    /// - Parameter laterFlush: how long after a commit nobody waits for it is flushed anyway;
    ///   with `waitsForDisk`, how long after it opened the open batch is committed and flushed
    ///   anyway (``WriteBatch``).
    init(path: String, waitsForDisk: Bool, readers readerCount: Int = 2, laterFlush: Duration = InlineSQLiteDatabase.laterFlush, logger: Logger)
        throws
    {
        // Connections never flush at commit: the flusher does, when someone waits. No memory map
        // (`mmap_size`): it saves four `pread`s per token request but cost about 0.1 ms of CPU more,
        // the file growing under it being mapped again and again (docs/performance.md).
        let settings = ["PRAGMA busy_timeout=5000", "PRAGMA foreign_keys=ON", "PRAGMA synchronous=NORMAL"]
        // The first connection switches the file to WAL; the others then open it in WAL mode.
        // Checkpoints are made by the flusher's thread, not in the writer's commits. When the
        // writer starts the log again from its beginning, a log that grew past 32 MiB (a long
        // read held the checkpoints back) is cut back to that size.
        let writerConnection = try SQLiteConnectionHandle(
            path: path, settings: settings + ["PRAGMA wal_autocheckpoint=0", "PRAGMA journal_size_limit=33554432"])
        do {
            let mode = try writerConnection.run("PRAGMA journal_mode=WAL", binds: [])
            guard mode.rows.first?.first == .text("wal") else {
                throw SQLiteFailure(
                    code: SQLITE_CANTOPEN,
                    message: "the file cannot be put in WAL mode (a network file system, or another process holds it exclusively)")
            }
            // The writer does not sleep inside SQLite while another process holds the write lock:
            // that sleep would hold the writer's lock, and in `signet serve` an event loop, and
            // every loop's writes behind it. `write` waits outside both instead.
            try writerConnection.execute("PRAGMA busy_timeout=0")
        } catch {
            writerConnection.close()
            throw error
        }
        let flushConnection: SQLiteConnectionHandle
        do {
            flushConnection = try SQLiteConnectionHandle(path: path, settings: settings)
            // A first read opens the log on the flusher's connection.
            _ = try flushConnection.run("SELECT count(*) FROM sqlite_master", binds: [])
        } catch {
            writerConnection.close()
            throw error
        }
        var readers: [SharedConnection] = []
        do {
            for _ in 0..<max(1, readerCount) { readers.append(SharedConnection(try SQLiteConnectionHandle(path: path, settings: settings))) }
        } catch {
            writerConnection.close()
            flushConnection.close()
            for reader in readers { reader.connection.withLock { $0.close() } }
            throw error
        }
        self.readers = readers
        let writer = SharedConnection(writerConnection)
        // A checkpoint every 256 commits (SQLite's own default is every 1000 pages). With
        // `waitsForDisk` a commit is a batch of the writes of several requests, about three token
        // requests' at concurrency 8 (``WriteBatch``): every 64, so the log does not outgrow its
        // 32 MiB between checkpoints.
        let writeLockQueue = WriteLockQueue(databasePath: path)
        self.writeLockQueue = writeLockQueue
        flusher = SQLiteFlusher(
            connection: flushConnection, laterFlush: laterFlush, commitsPerCheckpoint: waitsForDisk ? 64 : 256,
            writeLockQueue: waitsForDisk ? writeLockQueue : nil
        ) { body in
            try writer.connection.withLock { try body($0) }
        }
        self.writer = writer
        self.waitsForDisk = waitsForDisk
        self.logger = logger
        eventLoop = MultiThreadedEventLoopGroup.singleton.any()
    }

    /// Writes the deferred statements, flushes for those waiting and closes every connection;
    /// statements afterwards fail. The writer closes first, so no commit is made that the last
    /// flush does not cover.
    func close() {
        // Waits for another process's write lock as a write would; the writes of any caller
        // still running fail once the writer is closed, as they would without this step.
        if let failure = flusher.commitOpenBatch() {
            logger.error("audit events queued at close could not be written", metadata: ["reason": .string(failure.description)])
        }
        // A batch opened since is committed under the same hold as the close, which would roll it back.
        writer.connection.withLock { writer in
            do {
                try flusher.commitBatch(on: writer)
            } catch {
                logger.error("the writes of the last moment could not be committed at close", metadata: ["reason": .string("\(error)")])
            }
            writer.close()
        }
        flusher.close()
        for reader in readers { reader.connection.withLock { $0.close() } }
    }

    /// Closes once the writes waiting for another process's lock are done (at most their 5 s),
    /// so a write that began before the shutdown is not refused by it.
    func closeAfterWaitingWrites() async {
        var waited = 0
        while waitingWrites.load(ordering: .relaxed) > 0, waited < 5500 {
            try? await Task.sleep(for: .milliseconds(10))
            waited += 10
        }
        close()
    }

    /// Copies the whole log into the database file and empties it, so the file alone holds every
    /// commit (a restore moves the file without its log). While another connection is in the way
    /// (a reader on older pages, the flusher's own checkpoint) it tries again, in ``BusyWait``'s
    /// steps, for up to `patience` milliseconds. Throws when it cannot be done, the disk being
    /// full, say: the log is then the only copy of what it holds.
    func copyLogIntoDatabaseCompletely(patience: Int64 = BusyWait.patience) async throws {
        try await onWriter(patience: patience) { writer in
            try flusher.commitBatch(on: writer)
            try writer.checkpointCompletely()
        }
    }

    /// Runs `body` with the writer connection, under its lock; while `body` meets another
    /// connection's lock (`SQLITE_BUSY`) it tries again in ``BusyWait``'s steps, waiting with
    /// neither the lock nor the thread held, for up to `patience` milliseconds.
    private func onWriter(patience: Int64 = BusyWait.patience, _ body: @Sendable (SQLiteConnectionHandle) throws -> Void) async throws {
        var busy = BusyWait(patience: patience)
        while true {
            do {
                return try writer.connection.withLock { try body($0) }
            } catch let failure as SQLiteFailure where failure.isBusy {
                guard let delay = busy.nextDelay() else { throw failure }
                await Self.sleep(delay, on: MultiThreadedEventLoopGroup.currentEventLoop ?? eventLoop)
            }
        }
    }

    /// A view of this database that runs every statement on the writer, transaction control
    /// included, for the schema migrations' own `BEGIN` … `COMMIT`. Only for use before serving.
    var migrationSession: any SQLDatabase { WriterSession(database: self) }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    /// Where a statement runs, as the store method that sends it says (``SQLStore/lookUps``,
    /// ``SQLStore/listings``, ``SQLStore/writes``); SQLite's verdict on the prepared statement
    /// only confirms it, and a statement that is not what its route says is refused.
    enum Route: Sendable {
        /// A read of a few rows: on the writer when it is free (its page cache survives its own
        /// commits), else a reader.
        case lookUp
        /// A read that may go through many rows: on a reader, so it never holds the writer (on the
        /// writer only for a request that wrote into the open batch, the one connection that sees it).
        case listing
        /// A write: on the writer, in the open batch when answers wait for the disk.
        case write
        /// A write no transaction may hold (`VACUUM INTO`): alone, after the open batch's commit.
        case alone
    }

    /// A view of this database whose every statement takes `route`.
    func routed(_ route: Route) -> any SQLDatabase { RoutedSession(database: self, route: route) }

    /// A statement sent without a route (administrative and test code): a query runs as a
    /// look-up, a write as a write, by SQLite's verdict on the prepared statement.
    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await execute(query, route: nil, onRow)
    }

    fileprivate func execute(_ query: any SQLExpression, route: Route?, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        do { try await run(query, route: route, onRow) } catch let failure as SQLiteFailure where failure.isBusy {
            // Another process held the file's lock through the whole wait. When nothing of this
            // answer has been written yet, nothing was done and the same request later can work:
            // an outage (503 with Retry-After). After a write of its own, saying so would be
            // untrue (a retry could spend again): the failure stands.
            guard let scope = DurabilityScope.current, !scope.hasWritten else { throw failure }
            throw SignetError(.storageUnavailable, "the SQLite store stayed locked by another process; try again shortly")
        }
    }

    private func run(_ query: any SQLExpression, route: Route?, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        let values = try binds.map(SQLiteBinding.value(of:))
        switch route {
        case .write?: deliver(try await write(sql, values, expecting: .write), to: onRow)
        case .alone?: deliver(try await write(sql, values, alone: true), to: onRow)
        case .lookUp?, .listing?:
            guard let read = try read(sql, values, listing: route == .listing) else { throw Self.misrouted(sql, as: "a read") }
            deliver(read, to: onRow)
        case nil:
            if let read = try read(sql, values, listing: false) {
                deliver(read, to: onRow)
            } else {
                deliver(try await write(sql, values, expecting: .write), to: onRow)
            }
        }
    }

    /// The refusal of a statement that is not what its route says (a programming error).
    static func misrouted(_ sql: String, as route: String) -> SQLiteFailure {
        SQLiteFailure(
            code: SQLITE_MISUSE,
            message: "a statement sent as \(route) is not one, by SQLite's verdict; transactions and settings are not run through the shared database"
        )
    }

    fileprivate func executeOnWriter(_ query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        deliver(try await write(sql, try binds.map(SQLiteBinding.value(of:)), alone: true, mayOpenTransaction: true), to: onRow)
    }

    /// Writes a statement that nothing reads before it is written (an audit event). When the
    /// answer being made will wait for the disk (`waitsForDisk`, inside ``durableWrites(_:)``, a
    /// binding write), it is queued for the batch the flusher writes just before that answer's
    /// flush (``DeferredWrites``): the answer is given only once it is on disk, and if Signet
    /// stops before, neither is. Otherwise it is written at once, as any write.
    func writeDeferred(_ query: any SQLExpression) async throws {
        let (sql, binds) = serialize(query)
        let values = try binds.map(SQLiteBinding.value(of:))
        guard waitsForDisk, WriteBinding.isBinding, let scope = DurabilityScope.current else {
            _ = try await write(sql, values, expecting: .write)
            return
        }
        // Once a flush has failed nothing is queued: no flush would come to write it.
        try flusher.checkNotFailed()
        let ticket = flusher.deferred.add(DeferredWrites.Statement(sql: sql, values: values))
        scope.noteWrite()
        guard !scope.cover(deferred: ticket, binding: true) else { return }
        // The answer was given already (a task its request left running): this waits instead.
        try await flusher.waitUntilDurable(flusher.commitCounter.load(ordering: .acquiring), deferred: ticket)
    }

    /// Commits the open batch (``WriteBatch``) with the deferred statements queued so far, for a
    /// read of what they write on another connection: under the writer's lock whenever a batch is
    /// open or a statement is queued or being written, so that a batch another thread is
    /// committing is done first. While another process holds the write lock it waits as a write
    /// does.
    func commitPendingWrites() async throws {
        guard !flusher.deferred.isSettled || flusher.batchIsOpen.load(ordering: .acquiring) else { return }
        try await onWriter { try flusher.commitBatch(on: $0) }
    }

    /// The latest commit, and the latest known to be on disk (for tests).
    var commits: (made: Int, durable: Int) { (flusher.commitCounter.load(ordering: .acquiring), flusher.durableCommit) }

    /// Runs `body` with the writer connection, under its lock (for tests, which end its
    /// transaction as a failure inside SQLite would).
    func withWriter(_ body: @Sendable (SQLiteConnectionHandle) throws -> Void) throws {
        try writer.connection.withLock { try body($0) }
    }

    /// Whether the writer holds writes in its open batch, not yet committed (for tests).
    var hasOpenBatch: Bool { flusher.batchIsOpen.load(ordering: .acquiring) }

    /// How many times the connections' cached statements were prepared again (for tests).
    var repreparations: Int {
        ([writer] + readers).reduce(0) { total, shared in total + shared.connection.withLock { $0.repreparations } }
    }

    /// Whether a statement holds the writer connection right now (for tests).
    var writerIsHeld: Bool { writer.connection.withLockIfAvailable { _ in false } ?? true }

    /// Why writes cannot be made durable any more (a failed flush), for readiness.
    var flushFailure: String? { flusher.flushFailure }

    /// Runs `body`, whose writes wait for their commit only. If one of them binds
    /// (``WriteBinding``), one flush puts all of them on disk before it returns (or throws); an
    /// answer that made no binding write does not wait. Writes of tasks `body` leaves running
    /// after it returns wait for the disk themselves.
    func durableWrites<T>(_ body: () async throws -> T) async throws -> T {
        let parent = DurabilityScope.current
        guard waitsForDisk else {
            // No flush to share; the scope only tells whether the answer has written (``execute``).
            let scope = DurabilityScope(after: parent?.latestCommit ?? 0)
            defer { if scope.hasWritten { parent?.noteWrite() } }
            let result = try await DurabilityScope.$current.withValue(scope) { try await body() }
            // Nobody waits for the disk here, yet once a (timed) flush has failed no answer is
            // given as if all were well either.
            try flusher.checkNotFailed()
            return result
        }
        // A scope inside another (a charge made durable before the request goes on) reads where
        // its parent would: it starts from what the parent wrote into or read from.
        let scope = DurabilityScope(after: parent?.latestCommit ?? 0)
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await DurabilityScope.$current.withValue(scope) { try await body() })
        } catch {
            outcome = .failure(error)
        }
        if scope.hasWritten { parent?.noteWrite() }
        // Also every commit made by anyone before the end: the answer may tell of what its reads
        // saw (a code already used, a grant revoked). Free when those are on disk already.
        if let own = scope.end() {
            let latest = max(own.commit, flusher.commitCounter.load(ordering: .acquiring))
            if latest > 0 || own.deferred > 0 { try await flusher.waitUntilDurable(latest, deferred: own.deferred) }
        } else {
            // No flush to wait for; yet what it wrote or read in the open batch is committed
            // before the answer, so that a request after it sees what the answer told of.
            if scope.latestCommit > flusher.commitCounter.load(ordering: .acquiring) { try await commitPendingWrites() }
            // Once a flush has failed, no answer is given as if all were well, waiting or not.
            try flusher.checkNotFailed()
        }
        return try outcome.get()
    }

    /// - Parameter alone: whether it runs outside the open batch (``WriteBatch``), after its
    ///   commit: a migration's transaction control, or a statement no transaction may hold.
    /// - Parameter expecting: when `.write`, a statement SQLite does not call a write is refused
    ///   before it runs (a query or transaction control sent as a write).
    private func write(
        _ sql: String, _ values: [SQLiteValue], alone: Bool = false, mayOpenTransaction: Bool = false,
        expecting: SQLiteConnectionHandle.StatementKind? = nil
    ) async throws -> SQLiteResult {
        var (result, commit): (SQLiteResult, Int)
        var busy = BusyWait()
        var queued = false
        defer { if queued { writeLockQueue.leave() } }
        while true {
            do {
                (result, commit) = try writer.connection.withLock { connection in
                    if let expecting, try connection.kind(of: sql) != expecting { throw Self.misrouted(sql, as: "a write") }
                    if waitsForDisk {
                        guard alone else { return try flusher.runInBatch(sql, values, on: connection, mayGiveWay: !queued) }
                        try flusher.commitBatch(on: connection)
                    }
                    let result = try connection.run(sql, binds: values, mayOpenTransaction: mayOpenTransaction)
                    let commit = flusher.commitCounter.add(1, ordering: .releasing).newValue
                    flusher.noteCommit(commit)
                    return (result, commit)
                }
                break
            } catch let failure as SQLiteFailure where failure.isBusy && !failure.isStaleSnapshot {
                // Another process holds the write lock; the statement did nothing. Wait with
                // neither the writer's lock nor the thread held, then try again.
                guard let delay = busy.nextDelay() else { throw failure }
                if !queued, !failure.isGivingWay {
                    // Another process holds the lock: said, so that a server gives way to it.
                    writeLockQueue.join()
                    queued = true
                }
                waitingWrites.add(1, ordering: .relaxed)
                defer { waitingWrites.subtract(1, ordering: .relaxed) }
                await Self.sleep(delay, on: MultiThreadedEventLoopGroup.currentEventLoop ?? eventLoop)
            }
        }
        // Written: no longer waiting for the lock, while the flush is waited for.
        if queued {
            writeLockQueue.leave()
            queued = false
        }
        DurabilityScope.current?.noteWrite()
        if !waitsForDisk {
            flusher.commitMade()
        } else if DurabilityScope.current?.cover(commit, binding: WriteBinding.isBinding) != true {
            try await flusher.waitUntilDurable(commit)
        }
        return result
    }

    /// The waits between tries of a write while another process holds the write lock: 1, 2, 5,
    /// then 10 ms, 5 s in all (by the steps, and by the clock). Shorter than SQLite's own
    /// `busy_timeout` steps (up to 100 ms): a server gives way to a waiting process
    /// (``WriteLockQueue``) and holds its own writes back meanwhile, so that process should not
    /// sleep long once the lock is free.
    struct BusyWait {
        private static let steps: [Int64] = [1, 2, 5, 10]
        /// How long, in milliseconds, unless told otherwise.
        static let patience: Int64 = 5000
        private let total: Int64
        private var tries = 0
        private var waited: Int64 = 0

        private let started = DispatchTime.now().uptimeNanoseconds

        init(patience: Int64 = Self.patience) { total = patience }

        /// The next wait in milliseconds, or `nil` once the whole patience has been waited (its
        /// steps, or as long by the clock: a loaded machine's timers come late).
        mutating func nextDelay() -> Int64? {
            guard waited < total, DispatchTime.now().uptimeNanoseconds - started < UInt64(total) * 1_000_000 else { return nil }
            let delay = min(Self.steps[min(tries, Self.steps.count - 1)], total - waited)
            tries += 1
            waited += delay
            return delay
        }
    }

    /// Sleeps on an event loop's timer. Not cancellable: a write that has begun to wait goes on
    /// waiting, so a client that hangs up cannot make a write, such as a counted failure, vanish.
    private static func sleep(_ milliseconds: Int64, on eventLoop: any EventLoop) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            eventLoop.scheduleTask(in: .milliseconds(milliseconds)) { continuation.resume() }
        }
    }

    /// Without `waitsForDisk`, about how long after a commit it is on disk (later by an fsync or a
    /// checkpoint already under way): what a power loss may undo. PostgreSQL's `wal_writer_delay`
    /// is the same idea.
    static let laterFlush: Duration = .milliseconds(200)

    /// Rows are handed on outside any lock: the caller's closure may take its time.
    private func deliver(_ result: SQLiteResult, to onRow: (any SQLRow) -> Void) {
        for values in result.rows { onRow(InlineSQLiteRow(columns: result.columns, values: values)) }
    }

    /// Runs the query `sql` on the writer or a reader (a listing only on a reader, unless its
    /// request wrote into the open batch); `nil` when SQLite says it writes.
    private func read(_ sql: String, _ values: [SQLiteValue], listing: Bool) throws -> SQLiteResult? {
        let scope = DurabilityScope.current
        let attempt: WriterRead?
        if let scope, scope.latestCommit > flusher.commitCounter.load(ordering: .acquiring) {
            // A request that wrote into or read from the open batch (``WriteBatch``) reads on the
            // writer, the one connection that sees it before its commit, listings included.
            attempt = try writer.connection.withLock { try readOnWriter(sql, values, $0, for: scope) }
        } else if !listing {
            // Look-ups on the writer first when it is free: its page cache survives its own
            // commits, while every commit makes a reader reread the pages it uses (20 fewer reads
            // of the file per token request). Not listings, which may hold it for many
            // rows, and not while it is closed or inside a migration's transaction. Then a free
            // reader, else the next reader in turn. A read meeting another process's lock on the
            // writer, which does not wait for those, goes to a reader, which does.
            attempt = try writer.connection.withLockIfAvailable { try readOnWriter(sql, values, $0, for: scope) }
        } else {
            attempt = nil
        }
        switch attempt {
        case .rows(let answer)?: return answer
        case .writes?: return nil
        case .elsewhere?, nil: break
        }
        for reader in readers {
            if let answer = try reader.connection.withLockIfAvailable({ try Self.read(sql, values, on: $0) }) { return answer }
        }
        let turn = nextReader.wrappingAdd(1, ordering: .relaxed).oldValue
        return try readers[turn % readers.count].connection.withLock { try Self.read(sql, values, on: $0) }
    }

    /// A read on the writer (held by the caller). Inside the open batch only for a request,
    /// whose scope then counts the batch's commit as one it must not answer before; a read for
    /// no request (an administrative command, a background job) goes to a reader instead, which
    /// sees committed writes only.
    private func readOnWriter(_ sql: String, _ values: [SQLiteValue], _ writer: SQLiteConnectionHandle, for scope: DurabilityScope?) throws
        -> WriterRead
    {
        let batch = try flusher.openBatchCommit(on: writer)
        if batch != nil, scope == nil { return .elsewhere }
        let attempt: WriterRead
        do {
            attempt = try Self.attemptRead(sql, values, onWriter: writer, insideBatch: batch != nil)
        } catch {
            // A read's failure can end the transaction too (an I/O error, a full disk).
            if batch != nil { _ = try? flusher.checkBatchIntact(on: writer) }
            throw error
        }
        if let batch, case .rows = attempt { _ = scope?.cover(batch, binding: false) }
        return attempt
    }

    /// What a read tried on the writer connection came to.
    enum WriterRead {
        /// It ran: its rows.
        case rows(SQLiteResult)
        /// The statement writes.
        case writes
        /// It is for a reader: the writer is closed, inside a migration's transaction, or met
        /// another process's lock (it does not wait for those, `busy_timeout=0`).
        case elsewhere
    }

    /// Runs `sql` on the writer connection if it only reads and the writer can take it now.
    ///
    /// - Parameter insideBatch: whether the writer's open transaction is the open batch, which
    ///   the read may see; any other transaction (a migration's) sends it elsewhere.
    static func attemptRead(_ sql: String, _ values: [SQLiteValue], onWriter writer: SQLiteConnectionHandle, insideBatch: Bool = false) throws
        -> WriterRead
    {
        guard writer.isOpen, writer.isAutocommit || insideBatch else { return .elsewhere }
        do {
            switch try writer.kind(of: sql) {
            case .write: return .writes
            case .control: throw misrouted(sql, as: "a read")
            case .query: break
            }
            return .rows(try writer.run(sql, binds: values, mayOpenTransaction: insideBatch))
        } catch let failure as SQLiteFailure where failure.isBusy {
            return .elsewhere
        }
    }

    private static func read(_ sql: String, _ values: [SQLiteValue], on connection: SQLiteConnectionHandle) throws -> SQLiteResult? {
        switch try connection.kind(of: sql) {
        case .write: return nil
        case .control: throw misrouted(sql, as: "a read")
        case .query: return try connection.run(sql, binds: values)
        }
    }
}

private struct WriterSession: SQLDatabase {
    let database: InlineSQLiteDatabase
    var logger: Logger { database.logger }
    var eventLoop: any EventLoop { database.eventLoop }
    var dialect: any SQLDialect { database.dialect }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await database.executeOnWriter(query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await database.executeOnWriter(query, onRow)
    }
}

/// A view of the database whose every statement takes one ``InlineSQLiteDatabase/Route``.
private struct RoutedSession: SQLDatabase {
    let database: InlineSQLiteDatabase
    let route: InlineSQLiteDatabase.Route
    var logger: Logger { database.logger }
    var eventLoop: any EventLoop { database.eventLoop }
    var dialect: any SQLDialect { database.dialect }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await database.execute(query, route: route, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await database.execute(query, route: route, onRow)
    }
}
