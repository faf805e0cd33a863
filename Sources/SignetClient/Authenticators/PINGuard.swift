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

/// Nevis' schedule: failed attempt 1 → 0 s, 2 → 0 s, 3 → 60 s, 4 → 180 s, 5 → removed.
///
/// The app applies it before asking the provider, so a cool-down costs no round trip; the
/// provider applies the same schedule to the PIN proofs it checks and is the authority: its
/// answers (``sync(remaining:coolDown:now:)``) overwrite what the app counted.
public struct PINGuard: Sendable, Codable, Equatable {
    public static let coolDowns: [TimeInterval] = [0, 0, 60, 180]
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

    mutating func recordFailure(now: Date) {
        failures += 1
        let wait = failures <= Self.coolDowns.count ? Self.coolDowns[failures - 1] : 0
        blockedUntil = wait > 0 ? now.addingTimeInterval(wait) : nil
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
