// Fan-out of AuthState changes to every subscriber's AsyncStream.
import Synchronization

/// Hands each change to every open stream, in order; a stream that ends is dropped.
final class ChangeBroadcaster: Sendable {
    private let state = Mutex<(next: Int, continuations: [Int: AsyncStream<AuthState.Change>.Continuation])>((0, [:]))

    /// A new stream of every change from now on.
    func subscribe() -> AsyncStream<AuthState.Change> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthState.Change.self, bufferingPolicy: .unbounded)
        let id = state.withLock { state in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ change: AuthState.Change) {
        // Called from the actor only, so changes reach every stream in the order they happened.
        let continuations = state.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(change) }
    }

    deinit {
        state.withLock { $0.continuations.values.forEach { $0.finish() } }
    }
}
