// Slowing down password guessing per account name and per source address.
import Foundation
import SignetCore

/// Counts failed sign-ins and says how long the next attempt must wait.
///
/// Shared by every way of signing in (hosted page and, later, the native API),
/// so none is easier to brute-force than another. Names are counted whether or
/// not an account exists, so the answers never reveal which names exist.
public struct LoginThrottle: Sendable {
    let store: any ThrottleStore
    let policy: ThrottlePolicy
    let clock: SignetClock

    public init(store: any ThrottleStore, policy: ThrottlePolicy, clock: SignetClock) {
        self.store = store
        self.policy = policy
        self.clock = clock
    }

    static func accountKey(_ username: String) -> String { "account:" + SecretDigest.hex(username.lowercased()) }
    static func addressKey(_ address: String) -> String { "address:" + address }

    /// Seconds the caller must still wait before trying this name from this address, or 0.
    public func wait(username: String, address: String) async throws -> TimeInterval {
        let now = clock.now()
        var longest: TimeInterval = 0
        for (key, free) in [(Self.accountKey(username), policy.freeFailuresPerAccount), (Self.addressKey(address), policy.freeFailuresPerAddress)] {
            guard let record = try await store.throttle(key: key), now.timeIntervalSince(record.lastFailureAt) < policy.window else { continue }
            let until = record.lastFailureAt.addingTimeInterval(policy.pause(afterFailures: record.failures, free: free))
            longest = max(longest, until.timeIntervalSince(now))
        }
        return max(0, longest)
    }

    /// Counts a failure against the name and the address.
    public func recordFailure(username: String, address: String) async throws {
        let now = clock.now()
        let resetBefore = now.addingTimeInterval(-policy.window)
        _ = try await store.recordFailure(key: Self.accountKey(username), at: now, resetBefore: resetBefore)
        _ = try await store.recordFailure(key: Self.addressKey(address), at: now, resetBefore: resetBefore)
    }

    /// Clears the name's counter after a success.
    public func recordSuccess(username: String) async throws {
        try await store.resetThrottle(key: Self.accountKey(username))
    }

    /// The words shown while paused; the same whatever the reason, so nothing is revealed.
    public static func pauseMessage(seconds: TimeInterval) -> String {
        let minutes = Int((seconds / 60).rounded(.up))
        return minutes <= 1
            ? "Too many attempts. Wait a minute and try again."
            : "Too many attempts. Wait \(minutes) minutes and try again."
    }
}
