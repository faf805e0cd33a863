// Slowing down password guessing per account name and per source address.
import Foundation
import SignetCore

/// Counts sign-in attempts and says how long the next one must wait.
///
/// Shared by every way of signing in (hosted page and native API), so none is easier
/// to brute-force than another. Names are counted whether or not an account exists,
/// so the answers never reveal which names exist.
///
/// Both limits are reserved *before* the password is checked, atomically in the store
/// (so they hold across instances), and count failures, not traffic:
/// - the **account** is charged one attempt up front, given back by a right password;
/// - the **address** (IPv6 grouped by /64, see ``ClientAddress``) holds an in-flight slot while
///   the check runs; its failures plus the checks in flight may not exceed the free failures,
///   so a burst of guesses against many names from one address cannot all run. A burst of
///   legitimate sign-ins from one address is never refused for that: it waits (briefly) for a
///   slot, and only failures make anyone pause.
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
    static func addressKey(_ address: String) -> String { "address:" + ClientAddress.throttleGroup(address) }
    static func inFlightKey(_ address: String) -> String { "address-checking:" + ClientAddress.throttleGroup(address) }

    /// Whether an attempt may go ahead, and how long to wait if not.
    public enum Decision: Sendable, Equatable {
        case allowed
        case paused(seconds: TimeInterval)
    }

    /// Decides whether an attempt for this name from this address may check a password, and
    /// reserves it. Every `.allowed` must be followed by ``recordFailure(username:address:)`` or
    /// ``recordSuccess(username:address:)``.
    public func reserve(username: String, address: String) async throws -> Decision {
        if case .paused(let seconds) = try await reserveAddress(address) { return .paused(seconds: seconds) }
        let decision = try await reserveAccount(username)
        if decision != .allowed { try await store.releaseAttempt(key: Self.inFlightKey(address)) }
        return decision
    }

    /// After a wrong password: charges the address (the account was charged by ``reserve(username:address:)``).
    public func recordFailure(username: String, address: String) async throws {
        let now = clock.now()
        _ = try await store.recordFailure(key: Self.addressKey(address), at: now, resetBefore: now.addingTimeInterval(-policy.window))
        try await store.releaseAttempt(key: Self.inFlightKey(address))
    }

    /// After a right password: clears the name's count and frees the address's slot.
    public func recordSuccess(username: String, address: String) async throws {
        try await store.resetThrottle(key: Self.accountKey(username))
        try await store.releaseAttempt(key: Self.inFlightKey(address))
    }

    // MARK: address

    /// How long a request waits for an in-flight slot before it is answered with a short pause.
    static let slotWait: Duration = .seconds(10)

    private func reserveAddress(_ address: String) async throws -> Decision {
        let failuresKey = Self.addressKey(address), inFlightKey = Self.inFlightKey(address)
        let deadline = ContinuousClock.now.advanced(by: Self.slotWait)
        while true {
            let now = clock.now()
            // Take a slot first, then read the failures: a check that finishes meanwhile records its
            // failure before it frees its slot, so failures + slots never count fewer than run.
            // A slot whose holder crashed is forgotten after a minute without new reservations.
            let inFlight = try await store.recordFailure(key: inFlightKey, at: now, resetBefore: now.addingTimeInterval(-60))
            let failures = try await store.throttle(key: failuresKey).flatMap { $0.lastFailureAt < now.addingTimeInterval(-policy.window) ? nil : $0 }
            if let failures, failures.failures >= policy.freeFailuresPerAddress {
                // Past the free failures: pauses, and after each pause one more check at a time.
                let wait = self.wait(after: failures, free: policy.freeFailuresPerAddress, now: now)
                if wait > 0 {
                    try await store.releaseAttempt(key: inFlightKey)
                    return .paused(seconds: wait)
                }
            }
            let allowance = max(1, policy.freeFailuresPerAddress - (failures?.failures ?? 0))
            if inFlight.failures <= allowance { return .allowed }
            try await store.releaseAttempt(key: inFlightKey)
            guard ContinuousClock.now < deadline else { return .paused(seconds: 1) }
            try await Task.sleep(for: .milliseconds(Int.random(in: 10...40)))
        }
    }

    // MARK: account

    /// Counts the account's attempt atomically: within the free attempts every caller proceeds;
    /// past them only the first caller after the pause has elapsed proceeds, and concurrent ones
    /// are paused (and not counted).
    private func reserveAccount(_ username: String) async throws -> Decision {
        let now = clock.now()
        let resetBefore = now.addingTimeInterval(-policy.window)
        let accountKey = Self.accountKey(username)
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
