// FIDO UAF authenticators in SQL.
import Foundation
import SQLKit
import SignetCore
import SignetStore

extension SQLStore: AuthenticatorStore {
    /// The columns an authenticator is read from: its record and the state kept apart from it.
    private static let authenticatorColumns: SQLQueryString =
        "data, instance_id, sign_counter, pin_key, pin_failures, pin_blocked_until, clone_suspected_at, last_used_at"

    private func authenticator(from row: (any SQLRow)?) throws -> AuthenticatorRecord? {
        guard let row, var record = try record(AuthenticatorRecord.self, from: row) else { return nil }
        // A reactivation moves authenticators to the new instance in this column.
        record.instanceID = try row.decode(column: "instance_id", as: String.self)
        record.signCounter = UInt32(clamping: try row.decode(column: "sign_counter", as: Int64.self))
        record.pinKey = try row.decode(column: "pin_key", as: String?.self)
        record.pinFailures = Int(try row.decode(column: "pin_failures", as: Int64.self))
        record.pinBlockedUntil = try row.decode(column: "pin_blocked_until", as: Int64?.self).map(Self.date)
        record.cloneSuspectedAt = try row.decode(column: "clone_suspected_at", as: Int64?.self).map(Self.date)
        record.lastUsedAt = try row.decode(column: "last_used_at", as: Int64?.self).map(Self.date)
        return record
    }

    public func insertAuthenticator(_ authenticator: AuthenticatorRecord, maximumPerDevice: Int) async throws -> AuthenticatorRecord? {
        guard try await self.authenticator(userID: authenticator.userID, keyID: authenticator.keyID) == nil else {
            throw SignetError(.conflict, "the user has an authenticator with this KeyID")
        }
        if try await hasAAID(authenticator) { throw SignetError(.conflict, "the device has an authenticator \(authenticator.aaid)") }
        // The unique (instance_id, slot) index decides between concurrent registrations: each
        // tries the free slots in turn, and a slot taken meanwhile makes it try the next.
        for slot in 1...max(1, maximumPerDevice) {
            var record = authenticator
            record.slot = slot
            let inserted = try await writes.raw(
                """
                INSERT INTO signet_authenticators (id, user_id, instance_id, aaid, key_id, slot, sign_counter, pin_key, pin_failures, data)
                VALUES (\(bind: record.id), \(bind: record.userID), \(bind: record.instanceID), \(bind: record.aaid), \(bind: record.keyID), \(bind: Int64(slot)),
                \(bind: Int64(record.signCounter)), \(bind: record.pinKey), 0, \(bind: try Self.json(record)))
                ON CONFLICT DO NOTHING RETURNING id
                """
            ).first()
            if inserted != nil { return record }
            if try await self.authenticator(userID: authenticator.userID, keyID: authenticator.keyID) != nil {
                throw SignetError(.conflict, "the user has an authenticator with this KeyID")
            }
            if try await hasAAID(authenticator) { throw SignetError(.conflict, "the device has an authenticator \(authenticator.aaid)") }
        }
        return nil
    }

    private func hasAAID(_ authenticator: AuthenticatorRecord) async throws -> Bool {
        try await lookUps.raw(
            "SELECT id FROM signet_authenticators WHERE instance_id = \(bind: authenticator.instanceID) AND aaid = \(bind: authenticator.aaid)"
        ).first() != nil
    }

    public func authenticator(userID: String, keyID: String) async throws -> AuthenticatorRecord? {
        try authenticator(
            from: try await lookUps.raw(
                "SELECT \(Self.authenticatorColumns) FROM signet_authenticators WHERE user_id = \(bind: userID) AND key_id = \(bind: keyID)"
            ).first())
    }

    public func authenticator(id: String) async throws -> AuthenticatorRecord? {
        try authenticator(
            from: try await lookUps.raw("SELECT \(Self.authenticatorColumns) FROM signet_authenticators WHERE id = \(bind: id)").first())
    }

    public func authenticators(instanceID: String) async throws -> [AuthenticatorRecord] {
        // Cast for the reason `withGrant` (SQLStore+Grants.swift) gives: with a bare parameter SQLite prepared
        // this statement again at every call (an index scan ordered by its second column).
        try await listings.raw(
            "SELECT \(Self.authenticatorColumns) FROM signet_authenticators WHERE instance_id = CAST(\(bind: instanceID) AS TEXT) ORDER BY slot"
        ).all()
            .compactMap { try authenticator(from: $0) }
    }

    public func authenticators(userID: String) async throws -> [AuthenticatorRecord] {
        try await lookUps.raw("SELECT \(Self.authenticatorColumns) FROM signet_authenticators WHERE user_id = \(bind: userID)").all()
            .compactMap { try authenticator(from: $0) }.sorted { ($0.createdAt, $0.slot) < ($1.createdAt, $1.slot) }
    }

    public func deleteAuthenticator(id: String) async throws -> AuthenticatorRecord? {
        try authenticator(
            from: try await writes.raw("DELETE FROM signet_authenticators WHERE id = \(bind: id) RETURNING \(Self.authenticatorColumns)").first())
    }

    public func recordAuthenticatorUse(id: String, signCounter: UInt32, at date: Date) async throws -> CounterUpdate {
        let counter = Int64(signCounter)
        // Zero is what authenticators without a counter send (Nevis'), accepted only while the stored
        // one is zero too (a clone cannot reset a real counter with it); any other value must grow.
        let updated = try await writes.raw(
            """
            UPDATE signet_authenticators SET sign_counter = \(bind: counter), last_used_at = \(bind: Self.millis(date))
            WHERE id = \(bind: id) AND clone_suspected_at IS NULL AND ((\(bind: counter) = 0 AND sign_counter = 0) OR sign_counter < \(bind: counter)) RETURNING id
            """
        ).first()
        if updated != nil { return .accepted }
        let flagged = try await writes.raw(
            "UPDATE signet_authenticators SET clone_suspected_at = COALESCE(clone_suspected_at, \(bind: Self.millis(date))) WHERE id = \(bind: id) RETURNING id"
        ).first()
        return flagged == nil ? .unknown : .regressed
    }

    public func recordPINFailure(id: String, pinKey: String, at now: Date, coolDowns: [TimeInterval]) async throws -> PINFailureOutcome {
        let nowMillis = Self.millis(now)
        // The cool-down after the n-th failure is chosen in the same statement that counts it (SET
        // reads the old pin_failures), so no parallel guess can be counted before it is in place.
        var schedule: SQLQueryString = "NULL"
        let waits = coolDowns.enumerated().filter { $0.element > 0 }
        if !waits.isEmpty {
            schedule = "CASE"
            for (index, wait) in waits {
                schedule.appendLiteral(" WHEN pin_failures + 1 = \(index + 1) THEN ")
                schedule.appendInterpolation(bind: nowMillis + Int64((wait * 1000).rounded()))
            }
            schedule.appendLiteral(" ELSE NULL END")
        }
        let row = try await writes.raw(
            """
            UPDATE signet_authenticators SET pin_failures = pin_failures + 1, pin_blocked_until = \(schedule)
            WHERE id = \(bind: id) AND pin_key = \(bind: pinKey) AND (pin_blocked_until IS NULL OR pin_blocked_until <= \(bind: nowMillis))
            RETURNING pin_failures, pin_blocked_until
            """
        ).first()
        // Not applied: nothing more is read here, so a wrong guess costs what a right one does (the
        // caller reads the state once for both).
        guard let row else { return .coolingDown(until: nil) }
        return .counted(
            failures: Int(try row.decode(column: "pin_failures", as: Int64.self)),
            blockedUntil: try row.decode(column: "pin_blocked_until", as: Int64?.self).map(Self.date))
    }

    public func acceptPIN(id: String, pinKey: String, at now: Date, maximumFailures: Int) async throws -> Bool {
        try await writes.raw(
            """
            UPDATE signet_authenticators SET pin_failures = 0, pin_blocked_until = NULL
            WHERE id = \(bind: id) AND pin_key = \(bind: pinKey) AND pin_failures < \(bind: Int64(maximumFailures))
            AND (pin_blocked_until IS NULL OR pin_blocked_until <= \(bind: Self.millis(now))) RETURNING id
            """
        ).first() != nil
    }

    public func replacePINKey(id: String, from old: String, to new: String) async throws -> Bool {
        try await writes.raw(
            "UPDATE signet_authenticators SET pin_key = \(bind: new), pin_failures = 0, pin_blocked_until = NULL WHERE id = \(bind: id) AND pin_key = \(bind: old) RETURNING id"
        ).first() != nil
    }
}
