// A budget of uses per sliding window, kept in the store so every instance shares it.
import Foundation
import SignetCore
import SignetStore

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
        return try await swap(key, maximum: maximum) { stored, now in
            let live = (stored?.uses ?? []).filter { $0 > now.addingTimeInterval(-window) }
            if live.count >= maximum {
                let oldest = live[live.count - maximum]
                return (.spent(retryAfter: max(1, oldest.addingTimeInterval(window).timeIntervalSince(now))), nil)
            }
            return (.taken, LimitRecord(key: key, uses: live + [now], version: (stored?.version ?? 0) + 1, expiresAt: now.addingTimeInterval(window)))
        }
    }

    /// Returns the newest use taken from a budget of `maximum` uses.
    func giveBack(_ key: String, maximum: Int) async throws {
        try await swap(key, maximum: maximum) { stored, _ in
            guard var next = stored, !next.uses.isEmpty else { return ((), nil) }
            next.uses.removeLast()
            next.version += 1
            return ((), next)
        }
    }

    /// Reads `key`'s record and writes what `change` makes of it (nothing when it returns no
    /// record), by compare-and-swap, again while another request's swap comes first.
    ///
    /// A lost swap means another request took a use or gave one back, so retrying converges: once
    /// `maximum` uses are live every take ends at once. A request can lose to every other one
    /// taking a use, so the bound grows with `maximum` (50 tries failed 80 parallel requests on a
    /// 60-use budget when the machine was slow); past it the error says so.
    private func swap<Outcome>(
        _ key: String, maximum: Int, _ change: (_ stored: LimitRecord?, _ now: Date) -> (Outcome, LimitRecord?)
    ) async throws -> Outcome {
        for attempt in 0..<(4 * min(max(maximum, 0), 100_000) + 50) {
            if attempt > 0 { await Task.yield() }
            let stored = try await store.limit(key: key)
            let (outcome, next) = change(stored, clock.now())
            guard let next else { return outcome }
            if try await store.replaceLimit(next, expectedVersion: stored?.version) { return outcome }
        }
        throw SignetError(.storageFailure, "the limit \(key.prefix(40)) stayed contended")
    }
}
