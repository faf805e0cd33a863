// The writes of one answer, made durable together before it is given.
import Synchronization

/// Collects the commits made while answering one request, so that the answer waits for one fsync
/// covering all of them instead of one fsync per commit (``InlineSQLiteDatabase``).
///
/// A write made after the scope has ended (by a task the request started and left running)
/// is not covered by it: ``cover(_:)`` says so, and that write waits for the disk itself.
final class DurabilityScope: Sendable {
    /// The scope of the request the current task is answering, if any.
    @TaskLocal static var current: DurabilityScope?

    private struct State {
        var latest = 0
        var deferred = 0
        var binds = false
        var ended = false
        var wrote = false
    }

    /// What an answer waits for: its latest commit and its latest deferred statement's ticket
    /// (``DeferredWrites``), 0 for none.
    struct Covered: Equatable {
        let commit: Int
        let deferred: Int
    }
    private let state: Mutex<State>

    /// - Parameter latest: a commit already counted as read from (a parent scope's).
    init(after latest: Int = 0) {
        state = Mutex(State(latest: latest))
    }

    /// Adds the commit numbered `sequence`, a binding write or not (``WriteBinding``); `false`
    /// when the scope has ended.
    func cover(_ sequence: Int, binding: Bool) -> Bool {
        add(binding: binding) { $0.latest = max($0.latest, sequence) }
    }

    /// Adds the deferred statement with `ticket` (``DeferredWrites``), binding or not; `false`
    /// when the scope has ended.
    func cover(deferred ticket: Int, binding: Bool) -> Bool {
        add(binding: binding) { $0.deferred = max($0.deferred, ticket) }
    }

    private func add(binding: Bool, _ record: (inout State) -> Void) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            record(&state)
            state.binds = state.binds || binding
            return true
        }
    }

    /// Notes that a statement of this answer wrote (committed, or joined the open batch, or was
    /// queued): from then on a failure cannot be said to have left everything as it was.
    func noteWrite() { state.withLock { $0.wrote = true } }

    /// Whether any statement of this answer has written.
    var hasWritten: Bool { state.withLock { $0.wrote } }

    /// The latest commit it wrote into or read from, binding or not (0 for none).
    var latestCommit: Int { state.withLock { $0.latest } }

    /// Ends the scope: what it wrote, or `nil` when it made no binding write and so need not
    /// wait for the disk.
    func end() -> Covered? {
        state.withLock { state in
            state.ended = true
            return state.binds ? Covered(commit: state.latest, deferred: state.deferred) : nil
        }
    }
}
