// Slowing down password guessing per account name and per source address.
import Foundation
import SignetCore
import SignetStore

/// Counts sign-in attempts and says how long the next one must wait.
///
/// Shared by every way of signing in (hosted page and native API), so none is easier
/// to brute-force than another. Names are counted whether or not an account exists,
/// so the answers never reveal which names exist.
///
/// Both limits, the **account** name and the **address** (IPv6 grouped by /64, see
/// ``ClientAddress``), count failures, not traffic, atomically in the store (so they hold across
/// instances). Each check holds a slot of both while the password is checked (a row of its own,
/// ``ThrottleSlot``); the failures plus the checks in flight may not exceed the free failures, so a
/// burst of guesses cannot all run before the first is counted. A slot counts for as long as the
/// longest pause (15 minutes), so a check slowed down that much still holds its place; a slot its
/// process never released (it died mid-check) stops counting then, however many checks come
/// after it. A burst of legitimate sign-ins — one user on two devices, a load test on one
/// account, many people behind one address — is never refused for that: it waits (briefly) for a
/// slot, and only failures make anyone pause.
public struct LoginThrottle: Sendable {
    let store: any ThrottleStore
    let policy: ThrottlePolicy
    let clock: SignetClock
    let random = SecureRandom()

    public init(store: any ThrottleStore, policy: ThrottlePolicy, clock: SignetClock) {
        self.store = store
        self.policy = policy
        self.clock = clock
    }

    static func accountKey(_ username: String) -> String { "account:" + SecretDigest.hex(username.lowercased()) }
    static func accountSlotKey(_ username: String) -> String { "account-checking:" + SecretDigest.hex(username.lowercased()) }
    static func addressKey(_ address: String) -> String { "address:" + ClientAddress.throttleGroup(address) }
    static func addressSlotKey(_ address: String) -> String { "address-checking:" + ClientAddress.throttleGroup(address) }

    /// Whether an attempt may go ahead, and how long to wait if not.
    public enum Decision: Sendable, Equatable {
        case allowed
        case paused(seconds: TimeInterval)
    }

    /// A reservation's decision; when allowed, the slots it holds and the name's failures (in
    /// their window) it saw, if any: a right password clears those and no others.
    public struct Reservation: Sendable {
        public let decision: Decision
        public let accountFailures: ThrottleRecord?
        /// Where its failure is counted: the address's key and the name's.
        let failureKeys: (address: String, account: String)
        /// The two slots an allowed reservation holds until its outcome is recorded.
        let slots: [ThrottleSlot]
    }

    /// Decides whether an attempt for this name from this address may check a password, and
    /// reserves a slot of each. Every `.allowed` must be followed by ``recordFailure(_:)`` or
    /// ``recordSuccess(_:)``.
    public func reserve(username: String, address: String) async throws -> Reservation {
        let deadline = ContinuousClock.now.advanced(by: slotWait)
        let failureKeys = (address: Self.addressKey(address), account: Self.accountKey(username))
        let addressLimit = Limit(failures: failureKeys.address, slots: Self.addressSlotKey(address), free: policy.freeFailuresPerAddress)
        let forAddress = try await reserveSlot(addressLimit, until: deadline)
        guard let addressSlot = forAddress.slot else {
            return Reservation(decision: forAddress.decision, accountFailures: nil, failureKeys: failureKeys, slots: [])
        }
        let accountLimit = Limit(failures: failureKeys.account, slots: Self.accountSlotKey(username), free: policy.freeFailuresPerAccount)
        let forAccount: (decision: Decision, failures: ThrottleRecord?, slot: ThrottleSlot?)
        do {
            forAccount = try await reserveSlot(accountLimit, until: deadline)
        } catch {
            try? await release([addressSlot])
            throw error
        }
        guard let accountSlot = forAccount.slot else {
            try await release([addressSlot])
            return Reservation(decision: forAccount.decision, accountFailures: forAccount.failures, failureKeys: failureKeys, slots: [])
        }
        return Reservation(decision: .allowed, accountFailures: forAccount.failures, failureKeys: failureKeys, slots: [addressSlot, accountSlot])
    }

    /// After a wrong password: charges the address and the name, then frees both slots (in that
    /// order, so failures and slots together never count fewer checks than ran).
    public func recordFailure(_ reservation: Reservation) async throws {
        let now = clock.now()
        _ = try await store.recordFailure(key: reservation.failureKeys.address, at: now, resetBefore: now.addingTimeInterval(-policy.window))
        _ = try await store.recordFailure(key: reservation.failureKeys.account, at: now, resetBefore: now.addingTimeInterval(-policy.window))
        try await release(reservation.slots)
    }

    /// After a right password: clears the failures of the name the reservation saw
    /// (``Reservation/accountFailures``), and only those: a failure counted since by a concurrent
    /// wrong guess stays counted, and with none seen nothing is written. Then frees both slots.
    ///
    /// Neither write binds the answer to the disk (``WriteBinding``): a reset or a slot lost in a
    /// power failure leaves a count higher, never lower. A reset that fails still frees the slots
    /// (its failures stay counted), then its error is thrown.
    public func recordSuccess(_ reservation: Reservation) async throws {
        var resetFailure: (any Error)?
        if let seenFailures = reservation.accountFailures {
            do {
                try await WriteBinding.notBinding {
                    try await store.resetThrottle(key: reservation.failureKeys.account, unchangedSince: seenFailures)
                }
            } catch {
                resetFailure = error
            }
        }
        try await release(reservation.slots)
        if let resetFailure { throw resetFailure }
    }

    /// Frees slots, in one write. Not binding: a slot lost in a power failure counts until it
    /// expires (a higher count, never a lower one).
    private func release(_ slots: [ThrottleSlot]) async throws {
        guard !slots.isEmpty else { return }
        try await WriteBinding.notBinding { try await store.releaseSlots(slots) }
    }

    /// How long a request waits for an in-flight slot before it is answered with a short pause:
    /// long enough for a burst of right passwords on a busy machine (a wait holds only a sleeping
    /// task; it never runs a check beyond the allowance).
    var slotWait: Duration = .seconds(60)

    /// How long a slot counts unless released first: the longest a check may wait and run and
    /// still hold its place (a slot stands for a guess until its failure is counted, so as long as
    /// the longest pause), and so how long the slot of a check that never reported back (a crashed
    /// process) goes on counting. The same for both limits: an address's slot is taken first and
    /// held while the check waits for the account's (up to ``slotWait``) and then waits for bcrypt.
    static let slotLife: TimeInterval = 15 * 60

    /// A limit's keys in the store (its failures, its slots) and its free failures.
    struct Limit {
        let failures: String
        let slots: String
        let free: Int
    }

    /// Takes a slot of `limit` when its failures and checks in flight leave room (returned with
    /// `.allowed`); past the free failures, only after the pause and one check at a time. Without
    /// room, waits for a slot until `deadline` (checks in flight finish in a bcrypt time), then
    /// answers a short pause. `failures`: the limit's failures counted in its window when it
    /// decided, if any.
    private func reserveSlot(_ limit: Limit, until deadline: ContinuousClock.Instant) async throws -> (
        decision: Decision, failures: ThrottleRecord?, slot: ThrottleSlot?
    ) {
        while true {
            let now = clock.now()
            let slot = ThrottleSlot(key: limit.slots, id: random.token(byteCount: 16))
            // Take a slot first, then read the failures (one look, ``ThrottleStore/takeSlot``): a
            // check that finishes meanwhile records its failure before it frees its slot, so
            // failures + slots never count fewer than run. Not binding (WriteBinding): a slot
            // stands for a check until its failure is counted, and a failure binds; a slot lost in
            // a power failure was lost with every later write.
            let view: ThrottleSlotView
            do {
                view = try await WriteBinding.notBinding {
                    try await store.takeSlot(slot, expiresAt: now.addingTimeInterval(Self.slotLife), now: now, failuresKey: limit.failures)
                }
            } catch {
                // The slot may have been taken before the look failed: nobody else knows its id.
                try? await release([slot])
                throw error
            }
            let failures = view.failures.flatMap { $0.lastFailureAt < now.addingTimeInterval(-policy.window) ? nil : $0 }
            if let failures, failures.failures >= limit.free {
                // Past the free failures: pauses, and after each pause one more check at a time.
                let wait = self.wait(after: failures, free: limit.free, now: now)
                if wait > 0 {
                    try await release([slot])
                    return (.paused(seconds: wait), failures, nil)
                }
            }
            let allowance = max(1, limit.free - (failures?.failures ?? 0))
            if view.liveSlots <= allowance { return (.allowed, failures, slot) }
            try await release([slot])
            guard ContinuousClock.now < deadline else { return (.paused(seconds: 1), failures, nil) }
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
