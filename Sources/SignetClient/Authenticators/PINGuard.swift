// The PIN's brute-force schedule on the phone (seed 002), kept in step with the provider's.
import Foundation

/// What the app shows about a PIN authenticator.
public enum PINStatus: Sendable, Equatable {
    /// No wrong PIN since the last right one.
    case unlocked
    /// The last PIN was wrong: `remaining` tries before the authenticator is removed, and the
    /// seconds to wait before the next (0: at once).
    case lastAttemptFailed(remaining: Int, coolDown: TimeInterval)
    /// Too many wrong PINs: the authenticator was removed; register again.
    case lockedOut
}

/// The PIN's state under Nevis' schedule (failed attempt 1 → 0 s, 2 → 0 s, 3 → 60 s, 4 → 180 s,
/// 5 → removed) as the provider last reported it.
///
/// The provider counts and decides (the phone cannot tell a right PIN from a wrong one); the app
/// keeps its answers (``sync(remaining:coolDown:now:)``) so that a cool-down is refused here,
/// without a round trip, and the PIN's status can be shown.
public struct PINGuard: Sendable, Codable, Equatable {
    public static let maximumFailures = 5

    public private(set) var failures: Int = 0
    public private(set) var blockedUntil: Date?

    public init() {}

    public func status(now: Date) -> PINStatus {
        if failures >= Self.maximumFailures { return .lockedOut }
        guard failures > 0 else { return .unlocked }
        return .lastAttemptFailed(remaining: Self.maximumFailures - failures, coolDown: max(0, blockedUntil?.timeIntervalSince(now) ?? 0))
    }

    /// Seconds to wait before a PIN may be tried, or `nil` when it may be now.
    public func wait(now: Date) -> TimeInterval? {
        guard let blockedUntil, blockedUntil > now else { return nil }
        return blockedUntil.timeIntervalSince(now)
    }

    mutating func reset() {
        failures = 0
        blockedUntil = nil
    }

    /// Takes the provider's count: `remaining` tries left and `coolDown` seconds to wait.
    mutating func sync(remaining: Int?, coolDown: TimeInterval?, now: Date) {
        if let remaining { failures = max(0, Self.maximumFailures - remaining) }
        if let coolDown, coolDown > 0 { blockedUntil = now.addingTimeInterval(coolDown) }
    }
}
