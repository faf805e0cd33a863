// Sliding-window budgets in SQL: compare-and-swap on a version, like logins in progress.
import Foundation
import SQLKit
import SignetStore

extension SQLStore: LimitStore {
    public func limit(key: String) async throws -> LimitRecord? {
        try record(LimitRecord.self, from: try await lookUps.raw("SELECT data FROM signet_limits WHERE key = \(bind: key)").first())
    }

    public func replaceLimit(_ record: LimitRecord, expectedVersion: Int?) async throws -> Bool {
        let data = try Self.json(record)
        guard let expectedVersion else {
            return try await writes.raw(
                """
                INSERT INTO signet_limits (key, version, expires_at, data)
                VALUES (\(bind: record.key), \(bind: Int64(record.version)), \(bind: Self.millis(record.expiresAt)), \(bind: data))
                ON CONFLICT (key) DO NOTHING RETURNING key
                """
            ).first() != nil
        }
        return try await writes.raw(
            """
            UPDATE signet_limits SET version = \(bind: Int64(record.version)), expires_at = \(bind: Self.millis(record.expiresAt)), data = \(bind: data)
            WHERE key = \(bind: record.key) AND version = \(bind: Int64(expectedVersion)) RETURNING key
            """
        ).first() != nil
    }
}
