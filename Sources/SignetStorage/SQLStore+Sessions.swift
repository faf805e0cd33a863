// Browser sessions, replay records, throttling counters and expiry in SQL.
import Foundation
import SQLKit
import SignetCore
import SignetStore

extension SQLStore: SessionStore, ReplayStore, ThrottleStore, ExpiryStore, RememberTokenStore, SecretStore {
    public func insertRememberToken(_ token: RememberTokenRecord) async throws {
        try await writes.raw(
            "INSERT INTO signet_remember_tokens (token_hash, user_id, expires_at, data) VALUES (\(bind: token.tokenHash), \(bind: token.userID), \(bind: Self.millis(token.expiresAt)), \(bind: try Self.json(token)))"
        ).run()
    }

    public func rememberToken(hash: String) async throws -> RememberTokenRecord? {
        try record(
            RememberTokenRecord.self, from: try await lookUps.raw("SELECT data FROM signet_remember_tokens WHERE token_hash = \(bind: hash)").first())
    }

    public func deleteRememberToken(hash: String) async throws {
        try await writes.raw("DELETE FROM signet_remember_tokens WHERE token_hash = \(bind: hash)").run()
    }

    public func deleteRememberTokens(userID: String) async throws -> Int {
        try await writes.raw("DELETE FROM signet_remember_tokens WHERE user_id = \(bind: userID) RETURNING token_hash").all().count
    }

    public func secret(named name: String, orStore candidate: String) async throws -> String {
        try await writes.raw("INSERT INTO signet_secrets (name, value) VALUES (\(bind: name), \(bind: candidate)) ON CONFLICT DO NOTHING").run()
        guard let row = try await lookUps.raw("SELECT value FROM signet_secrets WHERE name = \(bind: name)").first() else {
            throw SignetError(.storageFailure, "the secret \(name) could not be stored")
        }
        return try row.decode(column: "value", as: String.self)
    }

    public func insertSession(_ session: BrowserSessionRecord) async throws {
        // Not binding (WriteBinding): a new browser session.
        try await WriteBinding.notBinding {
            try await writes.raw(
                "INSERT INTO signet_sessions (id_hash, user_id, expires_at, data) VALUES (\(bind: session.idHash), \(bind: session.userID), \(bind: Self.millis(session.expiresAt)), \(bind: try Self.json(session)))"
            ).run()
        }
    }

    public func session(idHash: String) async throws -> BrowserSessionRecord? {
        try record(BrowserSessionRecord.self, from: try await lookUps.raw("SELECT data FROM signet_sessions WHERE id_hash = \(bind: idHash)").first())
    }

    public func deleteSession(idHash: String) async throws {
        try await writes.raw("DELETE FROM signet_sessions WHERE id_hash = \(bind: idHash)").run()
    }

    public func deleteSessions(userID: String) async throws -> Int {
        try await writes.raw("DELETE FROM signet_sessions WHERE user_id = \(bind: userID) RETURNING id_hash").all().count
    }

    public func recordOnce(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        // One statement: a new key is inserted, an expired one taken over, a live one left as it is
        // (the conflict's WHERE fails, so no row comes back).
        let recorded = try await writes.raw(
            """
            INSERT INTO signet_replay (key, expires_at) VALUES (\(bind: key), \(bind: Self.millis(expiresAt)))
            ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE signet_replay.expires_at <= \(bind: Self.millis(now))
            RETURNING key
            """
        ).first()
        return recorded != nil
    }

    public func throttle(key: String) async throws -> ThrottleRecord? {
        guard let row = try await lookUps.raw("SELECT failures, last_failure_at FROM signet_throttle WHERE key = \(bind: key)").first() else {
            return nil
        }
        return ThrottleRecord(
            key: key, failures: Int(try row.decode(column: "failures", as: Int64.self)),
            lastFailureAt: Self.date(try row.decode(column: "last_failure_at", as: Int64.self)))
    }

    public func recordFailure(key: String, at date: Date, resetBefore: Date) async throws -> ThrottleRecord {
        let now = Self.millis(date)
        let row = try await writes.raw(
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

    public func resetThrottle(key: String, unchangedSince seen: ThrottleRecord) async throws {
        try await writes.raw(
            "DELETE FROM signet_throttle WHERE key = \(bind: key) AND failures <= \(bind: Int64(seen.failures)) AND last_failure_at <= \(bind: Self.millis(seen.lastFailureAt))"
        ).run()
    }

    /// Two statements: the slot is inserted (and committed) before the look, which reads the live
    /// slots and the failures together. The look's parameters are cast: SQLite plans a join by the
    /// value bound to a bare parameter, and after any schema change prepared it again at every call.
    public func takeSlot(_ slot: ThrottleSlot, expiresAt: Date, now: Date, failuresKey: String) async throws -> ThrottleSlotView {
        try await writes.raw(
            "INSERT INTO signet_throttle_slots (key, id, expires_at) VALUES (\(bind: slot.key), \(bind: slot.id), \(bind: Self.millis(expiresAt)))"
        ).run()
        let row = try await lookUps.raw(
            """
            SELECT (SELECT count(*) FROM signet_throttle_slots WHERE key = CAST(\(bind: slot.key) AS TEXT) AND expires_at > CAST(\(bind: Self.millis(now)) AS BIGINT)) AS live,
              t.failures, t.last_failure_at
            FROM (SELECT 1 AS one) AS one LEFT JOIN signet_throttle t ON t.key = CAST(\(bind: failuresKey) AS TEXT)
            """
        ).first()
        guard let row else { throw SignetError(.storageFailure, "the throttle's look returned no row") }
        let failures = try row.decode(column: "failures", as: Int64?.self)
        let lastFailureAt = try row.decode(column: "last_failure_at", as: Int64?.self)
        return ThrottleSlotView(
            liveSlots: Int(try row.decode(column: "live", as: Int64.self)),
            failures: failures.flatMap { failures in
                lastFailureAt.map { ThrottleRecord(key: failuresKey, failures: Int(failures), lastFailureAt: Self.date($0)) }
            })
    }

    /// One statement, so one commit, for all of `slots`.
    public func releaseSlots(_ slots: [ThrottleSlot]) async throws {
        guard !slots.isEmpty else { return }
        var sql = SQLQueryString("DELETE FROM signet_throttle_slots WHERE ")
        for (index, slot) in slots.enumerated() {
            sql.appendInterpolation(unsafeRaw: index == 0 ? "(key = " : " OR (key = ")
            sql.appendInterpolation(bind: slot.key)
            sql.appendInterpolation(unsafeRaw: " AND id = ")
            sql.appendInterpolation(bind: slot.id)
            sql.appendInterpolation(unsafeRaw: ")")
        }
        try await writes.raw(sql).run()
    }

    public func purgeExpired(before date: Date) async throws {
        let now = Self.millis(date)
        // Redeemed codes are kept a day so that a late replay still revokes what was issued from them.
        let codeHorizon = Self.millis(date.addingTimeInterval(-86_400))
        try await writes.raw("DELETE FROM signet_login_sessions WHERE expires_at < \(bind: now)").run()
        try await writes.raw("DELETE FROM signet_remember_tokens WHERE expires_at < \(bind: now)").run()
        try await writes.raw("DELETE FROM signet_codes WHERE expires_at < \(bind: codeHorizon)").run()
        try await writes.raw("DELETE FROM signet_refresh_tokens WHERE expires_at < \(bind: now)").run()
        try await writes.raw("DELETE FROM signet_grants WHERE expires_at < \(bind: now)").run()
        try await writes.raw("DELETE FROM signet_sessions WHERE expires_at < \(bind: now)").run()
        try await writes.raw("DELETE FROM signet_replay WHERE expires_at < \(bind: now)").run()
        try await writes.raw("DELETE FROM signet_limits WHERE expires_at < \(bind: now)").run()
        try await writes.raw("DELETE FROM signet_pushed_requests WHERE expires_at < \(bind: now)").run()
        try await writes.raw("DELETE FROM signet_device_instances WHERE expires_at < \(bind: now)").run()
        // Decided or not, an approval is kept a day after its expiry, for the audit of a late decision.
        try await writes.raw("DELETE FROM signet_approvals WHERE expires_at < \(bind: codeHorizon)").run()
        let throttleHorizon = Self.millis(date.addingTimeInterval(-ThrottleRecord.retention))
        try await writes.raw("DELETE FROM signet_throttle WHERE last_failure_at < \(bind: throttleHorizon)").run()
        try await writes.raw("DELETE FROM signet_throttle_slots WHERE expires_at < \(bind: now)").run()
    }
}
