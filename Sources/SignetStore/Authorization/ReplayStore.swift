// Values seen once only.
import Foundation

/// Values that may be seen once only, such as client-assertion `jti`s.
public protocol ReplayStore: Sendable {
    /// Records `key` until `expiresAt`; `true` for the first caller, `false` for every later one.
    func recordOnce(key: String, expiresAt: Date, now: Date) async throws -> Bool
}
