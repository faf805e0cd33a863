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
        var ended = false
    }
    private let state = Mutex(State())

    /// Adds the commit numbered `sequence`; `false` when the scope has ended.
    func cover(_ sequence: Int) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            state.latest = max(state.latest, sequence)
            return true
        }
    }

    /// Ends the scope: the latest commit to wait for (0 when it wrote nothing).
    func end() -> Int {
        state.withLock { state in
            state.ended = true
            return state.latest
        }
    }
}
