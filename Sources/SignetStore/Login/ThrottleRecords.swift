// Failed sign-ins counted per key, and the password checks in progress.
import Foundation

/// Failed sign-in attempts counted under one key (an account name or a source address).
public struct ThrottleRecord: Sendable, Equatable {
    /// How long a record is kept after its last failure unless the policy resets it sooner: a day.
    public static let retention: TimeInterval = 86_400

    public var key: String
    public var failures: Int
    public var lastFailureAt: Date

    public init(key: String, failures: Int, lastFailureAt: Date) {
        self.key = key
        self.failures = failures
        self.lastFailureAt = lastFailureAt
    }
}

/// One password check in progress under a throttle key (an account or an address), held in the
/// store while the check runs so parallel guesses cannot all start before the first is counted.
public struct ThrottleSlot: Sendable, Hashable {
    public var key: String
    /// Random, one per check.
    public var id: String

    public init(key: String, id: String) {
        self.key = key
        self.id = id
    }
}

/// What the holder of a new ``ThrottleSlot`` sees (``ThrottleStore/takeSlot(_:expiresAt:now:failuresKey:)``).
public struct ThrottleSlotView: Sendable, Equatable {
    /// The live slots under the key, the new one included.
    public var liveSlots: Int
    /// The failures counted under the limit's key, if any (whatever their age).
    public var failures: ThrottleRecord?

    public init(liveSlots: Int, failures: ThrottleRecord?) {
        self.liveSlots = liveSlots
        self.failures = failures
    }
}

/// Counters of failed sign-ins, and the slots of the password checks in progress.
public protocol ThrottleStore: Sendable {
    func throttle(key: String) async throws -> ThrottleRecord?
    /// Adds one failure atomically, starting afresh when the last one is older than `resetBefore`.
    func recordFailure(key: String, at: Date, resetBefore: Date) async throws -> ThrottleRecord
    /// Removes the record only if no failure was counted since `seen` was read from it (at most
    /// `seen.failures`, the last no later than `seen.lastFailureAt`), in one atomic step.
    func resetThrottle(key: String, unchangedSince seen: ThrottleRecord) async throws
    /// Takes `slot` until `expiresAt`, then looks: how many slots under its key are live at `now`
    /// (its own included) and the failures counted under `failuresKey`. Taken before the look, so
    /// a check that records its failure and then releases its slot is always seen in one or the
    /// other. A slot nobody releases (its process died) stops counting at its own `expiresAt`,
    /// whatever other slots are taken meanwhile.
    func takeSlot(_ slot: ThrottleSlot, expiresAt: Date, now: Date, failuresKey: String) async throws -> ThrottleSlotView
    /// Releases `slots` (unknown ones are ignored), in one write.
    func releaseSlots(_ slots: [ThrottleSlot]) async throws
}

extension ThrottleRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: ThrottleRecord(key: "", failures: 0, lastFailureAt: .distantPast),
        [.member("key", \.key), .member("failures", \.failures), .member("lastFailureAt", \.lastFailureAt)])
}
