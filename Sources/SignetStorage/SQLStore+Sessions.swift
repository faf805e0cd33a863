// Browser sessions, replay records, throttling counters and expiry in SQL.
import Foundation
import SQLKit
import SignetCore
import SignetServer

extension SQLStore: SessionStore, ReplayStore, ThrottleStore, ExpiryStore {
    public func insertSession(_ session: BrowserSessionRecord) async throws {
        try await database.raw(
            "INSERT INTO signet_sessions (id_hash, expires_at, data) VALUES (\(bind: session.idHash), \(bind: Self.millis(session.expiresAt)), \(bind: try Self.json(session)))"
        ).run()
    }

    public func session(idHash: String) async throws -> BrowserSessionRecord? {
        try Self.record(BrowserSessionRecord.self, from: try await database.raw("SELECT data FROM signet_sessions WHERE id_hash = \(bind: idHash)").first())
    }

    public func deleteSession(idHash: String) async throws {
        try await database.raw("DELETE FROM signet_sessions WHERE id_hash = \(bind: idHash)").run()
    }

    public func recordOnce(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await database.raw("DELETE FROM signet_replay WHERE key = \(bind: key) AND expires_at <= \(bind: Self.millis(now))").run()
        let inserted = try await database.raw(
            "INSERT INTO signet_replay (key, expires_at) VALUES (\(bind: key), \(bind: Self.millis(expiresAt))) ON CONFLICT DO NOTHING RETURNING key"
        ).first()
        return inserted != nil
    }

    public func throttle(key: String) async throws -> ThrottleRecord? {
        guard let row = try await database.raw("SELECT failures, last_failure_at FROM signet_throttle WHERE key = \(bind: key)").first() else {
            return nil
        }
        return ThrottleRecord(
            key: key, failures: Int(try row.decode(column: "failures", as: Int64.self)),
            lastFailureAt: Self.date(try row.decode(column: "last_failure_at", as: Int64.self)))
    }

    public func recordFailure(key: String, at date: Date, resetBefore: Date) async throws -> ThrottleRecord {
        let now = Self.millis(date)
        let row = try await database.raw(
            """
            INSERT INTO signet_throttle (key, failures, last_failure_at) VALUES (\(bind: key), 1, \(bind: now))
            ON CONFLICT (key) DO UPDATE SET
              failures = CASE WHEN signet_throttle.last_failure_at < \(bind: Self.millis(resetBefore)) THEN 1 ELSE signet_throttle.failures + 1 END,
              last_failure_at = \(bind: now)
            RETURNING failures
            """
        ).first()
        let failures = try row?.decode(column: "failures", as: Int64.self) ?? 1
        return ThrottleRecord(key: key, failures: Int(failures), lastFailureAt: date)
    }

    public func resetThrottle(key: String) async throws {
        try await database.raw("DELETE FROM signet_throttle WHERE key = \(bind: key)").run()
    }

    public func purgeExpired(before date: Date) async throws {
        let now = Self.millis(date)
        // Redeemed codes are kept a day so that a late replay still revokes what was issued from them.
        let codeHorizon = Self.millis(date.addingTimeInterval(-86_400))
        try await database.raw("DELETE FROM signet_pending_authorizations WHERE expires_at < \(bind: now)").run()
        try await database.raw("DELETE FROM signet_codes WHERE expires_at < \(bind: codeHorizon)").run()
        try await database.raw("DELETE FROM signet_refresh_tokens WHERE expires_at < \(bind: now)").run()
        try await database.raw("DELETE FROM signet_grants WHERE expires_at < \(bind: now)").run()
        try await database.raw("DELETE FROM signet_sessions WHERE expires_at < \(bind: now)").run()
        try await database.raw("DELETE FROM signet_replay WHERE expires_at < \(bind: now)").run()
    }
}
