// A budget of uses per sliding window, kept in the store so every instance shares it.
import Foundation
import SignetCore

/// At most `maximum` uses of `key` in any `window` seconds, by compare-and-swap on a
/// ``LimitRecord``, so parallel requests never overspend.
struct SlidingWindow: Sendable {
    let store: any LimitStore
    let clock: SignetClock

    /// Whether a use was taken, or how long until one is free.
    enum Decision: Sendable, Equatable {
        case taken
        case spent(retryAfter: TimeInterval)
    }

    /// Takes one use of `key`, or says when one is free.
    func take(_ key: String, maximum: Int, window: TimeInterval) async throws -> Decision {
        // A budget of nothing is always spent (and `live[live.count - maximum]` needs maximum > 0).
        guard maximum > 0 else { return .spent(retryAfter: max(1, window)) }
        // Compare-and-swap; a lost swap means another request took a use (or gave one back), so
        // retrying converges: once `maximum` uses are live every attempt ends at once. A request
        // can lose to every other one taking a use, so the bound grows with `maximum`: 50 tries
        // failed 80 parallel requests on a 60-use budget when the machine was slow.
        for attempt in 0..<(4 * min(maximum, 100_000) + 50) {
            if attempt > 0 { await Task.yield() }
            let now = clock.now()
            let stored = try await store.limit(key: key)
            let live = (stored?.uses ?? []).filter { $0 > now.addingTimeInterval(-window) }
            if live.count >= maximum {
                let oldest = live[live.count - maximum]
                return .spent(retryAfter: max(1, oldest.addingTimeInterval(window).timeIntervalSince(now)))
            }
            let next = LimitRecord(key: key, uses: live + [now], version: (stored?.version ?? 0) + 1, expiresAt: now.addingTimeInterval(window))
            if try await store.replaceLimit(next, expectedVersion: stored?.version) { return .taken }
        }
        throw SignetError(.storageFailure, "the limit \(key.prefix(40)) stayed contended")
    }

    /// Returns the newest use taken.
    func giveBack(_ key: String) async throws {
        for _ in 0..<50 {
            guard let stored = try await store.limit(key: key), !stored.uses.isEmpty else { return }
            var next = stored
            next.uses.removeLast()
            next.version += 1
            if try await store.replaceLimit(next, expectedVersion: stored.version) { return }
        }
    }
}
