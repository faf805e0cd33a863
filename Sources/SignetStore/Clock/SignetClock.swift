// Time, passed in so tests can pin it.
import Foundation

/// Where the provider reads the current time.
public struct SignetClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    /// The system clock.
    public static let system = SignetClock { Date() }

    /// The current time.
    public func now() -> Date { read() }
}
