// Statements written later and together: the audit trail's inserts.
import Synchronization
import VaporCSQLite

/// Statements whose caller need not see them written before it goes on (an audit event), kept in
/// order and written together, in the writer's open batch (``WriteBatch``), by whoever commits it
/// first: the flusher just before its next flush (so an answer that waits for the disk finds its
/// statements there too), a read of what they write, or the store's close.
///
/// An audit event written alone costs a commit of its own, and its table's last page and those
/// of its indexes are written again to the log by every event. Written together, the events of
/// one flush share those pages and that commit (docs/performance.md, fourteenth part).
///
/// Each statement gets a ticket (1, 2, …) in the order it was queued; ``written`` is the latest
/// ticket whose statement is committed. Written by hand: SQLite has no deferred statements.
final class DeferredWrites: Sendable {
    /// A statement and its values, as the writer runs it.
    struct Statement: Sendable {
        let sql: String
        let values: [SQLiteValue]
    }

    private struct State {
        var queue: [Statement] = []
        var queued = 0
        var written = 0
        /// The latest ticket run inside the writer's open transaction.
        var inTransaction = 0
    }
    private let state = Mutex(State())

    /// Queues `statement` and returns its ticket.
    func add(_ statement: Statement) -> Int {
        state.withLock { state in
            state.queue.append(statement)
            state.queued += 1
            return state.queued
        }
    }

    /// The latest ticket given (for tests).
    var lastTicket: Int { state.withLock { $0.queued } }

    /// The latest ticket whose statement is committed (every earlier one is too).
    var written: Int { state.withLock { $0.written } }

    /// Whether statements are queued.
    var isEmpty: Bool { state.withLock { $0.queue.isEmpty } }

    /// Whether every statement queued so far is written: none queued and none being written (a
    /// batch taken out is counted as written only once committed).
    var isSettled: Bool { state.withLock { $0.queue.isEmpty && $0.written == $0.queued } }

    /// Runs every queued statement on `writer`, which the caller holds (under the writer's lock,
    /// so they run in the order they were queued) inside the transaction it has open (the
    /// writer's open batch, ``WriteBatch``). They count as written once that transaction is
    /// committed (``markCommitted()``).
    ///
    /// A failure throws; the statements are then dropped with the transaction, which the caller
    /// rolls back and treats as a failed flush.
    func run(on writer: SQLiteConnectionHandle) throws {
        let batch = state.withLock { state in
            defer { state.queue.removeAll(keepingCapacity: true) }
            return (statements: state.queue, last: state.queued)
        }
        guard !batch.statements.isEmpty else { return }
        for statement in batch.statements { _ = try writer.run(statement.sql, binds: statement.values, mayOpenTransaction: true) }
        state.withLock { $0.inTransaction = max($0.inTransaction, batch.last) }
    }

    /// Counts the statements run in the transaction just committed as written.
    func markCommitted() {
        state.withLock { $0.written = max($0.written, $0.inTransaction) }
    }
}
