// The one clock every test target moves by hand, so expiry and refetch intervals are tested without sleeping.
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

    /// Whole seconds since 1970, as JWT claims count them.
    public var seconds: Int { Int(now.timeIntervalSince1970) }

    /// A `now` closure reading this clock (the relying-party kit's and the SDK's time source).
    public var read: @Sendable () -> Date { { self.now } }

    /// This clock as the provider's time source.
    public var signetClock: SignetClock { SignetClock { [self] in self.now } }
}
