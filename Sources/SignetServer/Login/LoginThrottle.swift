// Slowing down password guessing per account name and per source address.
import Foundation
import SignetCore

/// Counts sign-in attempts and says how long the next one must wait.
///
/// Shared by every way of signing in (hosted page and native API), so none is easier
/// to brute-force than another. Names are counted whether or not an account exists,
/// so the answers never reveal which names exist.
///
/// An attempt is counted *before* the password is checked (``reserve(username:address:)``),
/// atomically, so a burst of parallel guesses cannot all slip through before the first
/// failure is recorded; a success then clears the account's count and gives the address
/// its attempt back.
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

    /// Whether an attempt may go ahead, and how long to wait if not.
    public enum Decision: Sendable, Equatable {
        case allowed
        case paused(seconds: TimeInterval)
    }

    /// Counts an attempt for this name and address, and decides whether it may check a password.
    ///
    /// Within the free attempts every caller proceeds. Past them, only the first caller
    /// after the pause has elapsed proceeds; every concurrent one is paused.
    public func reserve(username: String, address: String) async throws -> Decision {
        var longest: TimeInterval = 0
        for (key, free) in [(Self.accountKey(username), policy.freeFailuresPerAccount), (Self.addressKey(address), policy.freeFailuresPerAddress)] {
            let now = clock.now()
            let resetBefore = now.addingTimeInterval(-policy.window)
            let before = try await store.throttle(key: key).flatMap { $0.lastFailureAt < resetBefore ? nil : $0 }
            var wait: TimeInterval = 0
            if let before {
                let until = before.lastFailureAt.addingTimeInterval(policy.pause(afterFailures: before.failures, free: free))
                wait = max(0, until.timeIntervalSince(now))
            }
            if wait > 0 {
                longest = max(longest, wait)
                continue
            }
            let counted = try await store.recordFailure(key: key, at: now, resetBefore: resetBefore)
            // Past the free attempts, only the caller whose count follows the one it read may go on.
            if counted.failures > free, counted.failures != (before?.failures ?? 0) + 1 {
                longest = max(longest, max(1, policy.pause(afterFailures: counted.failures - 1, free: free)))
            }
        }
        return longest > 0 ? .paused(seconds: longest) : .allowed
    }

    /// After a right password: clears the name's count and gives the address its attempt back.
    public func recordSuccess(username: String, address: String) async throws {
        try await store.resetThrottle(key: Self.accountKey(username))
        try await store.releaseAttempt(key: Self.addressKey(address))
    }

    /// The words shown while paused; the same whatever the reason, so nothing is revealed.
    public static func pauseMessage(seconds: TimeInterval) -> String {
        let minutes = Int((seconds / 60).rounded(.up))
        return minutes <= 1
            ? "Too many attempts. Wait a minute and try again."
            : "Too many attempts. Wait \(minutes) minutes and try again."
    }
}
