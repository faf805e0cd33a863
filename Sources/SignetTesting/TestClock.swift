// A clock tests move by hand, so expiry is tested without sleeping.
import Foundation
import SignetServer
import SignetStore
import Synchronization

/// A clock that stands still until told to move.
public final class TestClock: Sendable {
    private let current: Mutex<Date>

    /// Starts at `start` (default: now, rounded to the second).
    public init(start: Date = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))) {
        self.current = Mutex(start)
    }

    /// The current test time.
    public var now: Date { current.withLock { $0 } }

    /// Moves time forward.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    /// This clock as the provider's time source.
    public var signetClock: SignetClock { SignetClock { [self] in self.now } }
}
