// Budgets with a sliding window and where they are kept.
import Foundation

/// The recent uses of one budget (such as an account's SMS sends), for a sliding-window limit.
///
/// Changed only by compare-and-swap on ``version``, so concurrent takers never overspend.
public struct LimitRecord: Sendable, Equatable {
    public var key: String
    /// When each use still inside the window happened, oldest first.
    public var uses: [Date]
    /// Incremented by every change.
    public var version: Int
    /// When the newest use leaves the window (the record may be removed then).
    public var expiresAt: Date

    public init(key: String, uses: [Date], version: Int, expiresAt: Date) {
        self.key = key
        self.uses = uses
        self.version = version
        self.expiresAt = expiresAt
    }
}

/// Budgets with a sliding window (per-account SMS sends and wrong codes).
public protocol LimitStore: Sendable {
    func limit(key: String) async throws -> LimitRecord?
    /// Writes `record` if the stored one is still at `expectedVersion` (`nil`: none is stored yet);
    /// `false` when another change came first.
    func replaceLimit(_ record: LimitRecord, expectedVersion: Int?) async throws -> Bool
}

extension LimitRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: LimitRecord(key: "", uses: [], version: 0, expiresAt: .distantPast),
        [.member("key", \.key), .codable("uses", \.uses), .member("version", \.version), .member("expires_at", \.expiresAt)])
}
