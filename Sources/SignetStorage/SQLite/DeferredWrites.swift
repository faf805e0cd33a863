// Statements written later and together: the audit trail's inserts.
import Synchronization
import VaporCSQLite

/// Statements whose caller need not see them written before it goes on (an audit event), kept in
/// order and written together, in one transaction on the writer connection, by whoever comes
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

    /// Writes every queued statement in one transaction on `writer`, which the caller holds
    /// (under the writer's lock, so batches are committed in the order they were queued).
    /// Returns whether a commit was made.
    ///
    /// When another process holds the write lock (`SQLITE_BUSY`) nothing is written and the
    /// statements stay queued, in front of any queued meanwhile. Any other failure rolls the
    /// batch back and throws it; the statements are then dropped, and the caller treats it as a
    /// failed flush.
    func write(on writer: SQLiteConnectionHandle) throws -> Bool {
        let batch = state.withLock { state in
            defer { state.queue.removeAll(keepingCapacity: true) }
            return (statements: state.queue, last: state.queued)
        }
        guard !batch.statements.isEmpty else { return false }
        do {
            _ = try writer.run("BEGIN IMMEDIATE", binds: [], mayOpenTransaction: true)
            for statement in batch.statements { _ = try writer.run(statement.sql, binds: statement.values, mayOpenTransaction: true) }
            _ = try writer.run("COMMIT", binds: [], mayOpenTransaction: true)
        } catch {
            if !writer.isAutocommit { try? writer.execute("ROLLBACK") }
            if let failure = error as? SQLiteFailure, failure.isBusy {
                state.withLock { $0.queue.insert(contentsOf: batch.statements, at: 0) }
            }
            throw error
        }
        state.withLock { $0.written = max($0.written, batch.last) }
        return true
    }
}
