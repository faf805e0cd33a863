// Slowing down password guessing per account name and per source address.
import Foundation
import SignetCore

/// Counts sign-in attempts and says how long the next one must wait.
///
/// Shared by every way of signing in (hosted page and native API), so none is easier
/// to brute-force than another. Names are counted whether or not an account exists,
/// so the answers never reveal which names exist.
///
/// An account's attempt is counted *before* the password is checked
/// (``reserve(username:address:)``), atomically, so a burst of parallel guesses at one account
/// cannot all slip through before the first failure is recorded.
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

    /// Decides whether an attempt for this name from this address may check a password.
    ///
    /// The account's attempt is counted here, atomically, before the password is checked:
    /// within the free attempts every caller proceeds; past them only the first caller after
    /// the pause has elapsed proceeds, and concurrent ones are paused (and not counted).
    /// The address is checked here and charged only for failures (``recordFailure``), so many
    /// people signing in at once behind one address are not paused.
    public func reserve(username: String, address: String) async throws -> Decision {
        let now = clock.now()
        let resetBefore = now.addingTimeInterval(-policy.window)
        let addressKey = Self.addressKey(address), accountKey = Self.accountKey(username)
        let addressRecord = try await store.throttle(key: addressKey).flatMap { $0.lastFailureAt < resetBefore ? nil : $0 }
        let addressWait = wait(after: addressRecord, free: policy.freeFailuresPerAddress, now: now)
        if addressWait > 0 { return .paused(seconds: addressWait) }

        let before = try await store.throttle(key: accountKey).flatMap { $0.lastFailureAt < resetBefore ? nil : $0 }
        let accountWait = wait(after: before, free: policy.freeFailuresPerAccount, now: now)
        if accountWait > 0 { return .paused(seconds: accountWait) }
        let counted = try await store.recordFailure(key: accountKey, at: now, resetBefore: resetBefore)
        if counted.failures > policy.freeFailuresPerAccount, counted.failures != (before?.failures ?? 0) + 1 {
            try await store.releaseAttempt(key: accountKey)
            return .paused(seconds: max(1, policy.pause(afterFailures: counted.failures - 1, free: policy.freeFailuresPerAccount)))
        }
        return .allowed
    }

    /// After a wrong password: charges the address (the account was charged by ``reserve(username:address:)``).
    public func recordFailure(address: String) async throws {
        let now = clock.now()
        _ = try await store.recordFailure(key: Self.addressKey(address), at: now, resetBefore: now.addingTimeInterval(-policy.window))
    }

    /// After a right password: clears the name's count.
    public func recordSuccess(username: String) async throws {
        try await store.resetThrottle(key: Self.accountKey(username))
    }

    private func wait(after record: ThrottleRecord?, free: Int, now: Date) -> TimeInterval {
        guard let record else { return 0 }
        let until = record.lastFailureAt.addingTimeInterval(policy.pause(afterFailures: record.failures, free: free))
        return max(0, until.timeIntervalSince(now))
    }

    /// The words shown while paused; the same whatever the reason, so nothing is revealed.
    public static func pauseMessage(seconds: TimeInterval) -> String {
        let minutes = Int((seconds / 60).rounded(.up))
        return minutes <= 1
            ? "Too many attempts. Wait a minute and try again."
            : "Too many attempts. Wait \(minutes) minutes and try again."
    }
}
