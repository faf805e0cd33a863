// Slowing down password guessing per account name and per source address.
import Foundation
import SignetCore

/// Counts sign-in attempts and says how long the next one must wait.
///
/// Shared by every way of signing in (hosted page and native API), so none is easier
/// to brute-force than another. Names are counted whether or not an account exists,
/// so the answers never reveal which names exist.
///
/// Both limits, the **account** name and the **address** (IPv6 grouped by /64, see
/// ``ClientAddress``), count failures, not traffic, atomically in the store (so they hold across
/// instances). Each check holds an in-flight slot of both while the password is checked; the
/// failures plus the checks in flight may not exceed the free failures, so a burst of guesses
/// cannot all run before the first is counted. The account is also charged each check up front
/// and given it back by a right password, so a check slowed past its slot's life still counts. A burst of legitimate sign-ins — one user on two
/// devices, a load test on one account, many people behind one address — is never refused for
/// that: it waits (briefly) for a slot, and only failures make anyone pause.
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
    static func accountInFlightKey(_ username: String) -> String { "account-checking:" + SecretDigest.hex(username.lowercased()) }
    static func addressKey(_ address: String) -> String { "address:" + ClientAddress.throttleGroup(address) }
    static func inFlightKey(_ address: String) -> String { "address-checking:" + ClientAddress.throttleGroup(address) }

    /// Whether an attempt may go ahead, and how long to wait if not.
    public enum Decision: Sendable, Equatable {
        case allowed
        case paused(seconds: TimeInterval)
    }

    /// Decides whether an attempt for this name from this address may check a password, and
    /// reserves a slot of each; the account is also charged the attempt now (fail closed: a check
    /// that never reports back stays counted). Every `.allowed` must be followed by
    /// ``recordFailure(username:address:)`` or ``recordSuccess(username:address:)``.
    public func reserve(username: String, address: String) async throws -> Decision {
        let deadline = ContinuousClock.now.advanced(by: Self.slotWait)
        let addressLimit = Limit(failures: Self.addressKey(address), inFlight: Self.inFlightKey(address), free: policy.freeFailuresPerAddress)
        if case .paused(let seconds) = try await reserveSlot(addressLimit, until: deadline) { return .paused(seconds: seconds) }
        let decision: Decision
        do {
            decision = try await reserveAccount(username, until: deadline)
        } catch {
            try? await store.releaseAttempt(key: addressLimit.inFlight)
            throw error
        }
        if decision != .allowed { try await store.releaseAttempt(key: addressLimit.inFlight) }
        return decision
    }

    /// After a wrong password: charges the address (the account was charged by ``reserve(username:address:)``),
    /// then frees both slots (in that order, so failures and slots never count fewer checks than ran).
    public func recordFailure(username: String, address: String) async throws {
        let now = clock.now()
        _ = try await store.recordFailure(key: Self.addressKey(address), at: now, resetBefore: now.addingTimeInterval(-policy.window))
        try await store.releaseAttempt(key: Self.inFlightKey(address))
        try await store.releaseAttempt(key: Self.accountInFlightKey(username))
    }

    /// After a right password: clears the name's count and frees both slots.
    public func recordSuccess(username: String, address: String) async throws {
        try await store.resetThrottle(key: Self.accountKey(username))
        try await store.releaseAttempt(key: Self.inFlightKey(address))
        try await store.releaseAttempt(key: Self.accountInFlightKey(username))
    }

    /// How long a request waits for an in-flight slot before it is answered with a short pause:
    /// long enough for a burst of right passwords on a busy machine (a wait holds only a sleeping
    /// task; it never runs a check beyond the allowance).
    static let slotWait: Duration = .seconds(60)

    /// A limit's keys in the store: its failures, its checks in flight, and its free failures.
    struct Limit {
        let failures: String
        let inFlight: String
        let free: Int
    }

    /// The address: takes a slot when its failures and checks in flight leave room; past the free
    /// failures, only after the pause and one check at a time. Without room, waits for a slot
    /// until `deadline` (checks in flight finish in a bcrypt time), then answers a short pause.
    private func reserveSlot(_ limit: Limit, until deadline: ContinuousClock.Instant) async throws -> Decision {
        while true {
            let now = clock.now()
            // Take a slot first, then read the failures: a check that finishes meanwhile records its
            // failure before it frees its slot, so failures + slots never count fewer than run.
            // A slot whose holder crashed is forgotten after a minute without new reservations.
            let inFlight = try await store.recordFailure(key: limit.inFlight, at: now, resetBefore: now.addingTimeInterval(-60))
            let failures = try await store.throttle(key: limit.failures).flatMap { $0.lastFailureAt < now.addingTimeInterval(-policy.window) ? nil : $0 }
            if let failures, failures.failures >= limit.free {
                // Past the free failures: pauses, and after each pause one more check at a time.
                let wait = self.wait(after: failures, free: limit.free, now: now)
                if wait > 0 {
                    try await store.releaseAttempt(key: limit.inFlight)
                    return .paused(seconds: wait)
                }
            }
            let allowance = max(1, limit.free - (failures?.failures ?? 0))
            if inFlight.failures <= allowance { return .allowed }
            try await store.releaseAttempt(key: limit.inFlight)
            guard ContinuousClock.now < deadline else { return .paused(seconds: 1) }
            try await Task.sleep(for: .milliseconds(Int.random(in: 10...40)))
        }
    }

    /// The account: as the address, but each allowed check is charged to the account's count at
    /// once (and given back by a right password), so a check that is slowed, fails or is lost
    /// stays counted even after its slot is forgotten. Checks in flight are told from real
    /// failures by the slots: a burst of right passwords waits for slots, never pauses.
    private func reserveAccount(_ username: String, until deadline: ContinuousClock.Instant) async throws -> Decision {
        let accountKey = Self.accountKey(username), inFlightKey = Self.accountInFlightKey(username)
        let free = policy.freeFailuresPerAccount
        while true {
            let now = clock.now()
            let inFlight = try await store.recordFailure(key: inFlightKey, at: now, resetBefore: now.addingTimeInterval(-60))
            let charged = try await store.throttle(key: accountKey).flatMap { $0.lastFailureAt < now.addingTimeInterval(-policy.window) ? nil : $0 }
            // The other checks in flight have charged the count too; what is left are failures.
            // (A forgotten slot makes this larger, never smaller: fail closed.)
            let failures = max(0, (charged?.failures ?? 0) - (inFlight.failures - 1))
            if var record = charged, failures >= free {
                record.failures = failures
                let wait = self.wait(after: record, free: free, now: now)
                if wait > 0 {
                    try await store.releaseAttempt(key: inFlightKey)
                    return .paused(seconds: wait)
                }
            }
            if inFlight.failures <= max(1, free - failures) {
                _ = try await store.recordFailure(key: accountKey, at: now, resetBefore: now.addingTimeInterval(-policy.window))
                return .allowed
            }
            try await store.releaseAttempt(key: inFlightKey)
            guard ContinuousClock.now < deadline else { return .paused(seconds: 1) }
            try await Task.sleep(for: .milliseconds(Int.random(in: 10...40)))
        }
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
