// A clock tests move by hand, so expiry and refetch intervals are tested without sleeping.
import Foundation
import Synchronization

/// The current time, set and advanced by the test.
final class ManualClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) { current = Mutex(start) }

    /// The time now.
    var now: Date { current.withLock { $0 } }

    /// Whole seconds since 1970, as JWT claims count them.
    var seconds: Int { Int(now.timeIntervalSince1970) }

    /// Moves the clock forward.
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }

    /// A `now` closure reading this clock.
    var read: @Sendable () -> Date { { self.now } }
}
