// App installations in SQL.
import Foundation
import SQLKit
import SignetCore
import SignetStore

extension SQLStore: DeviceStore {
    public func insertDeviceInstance(_ instance: DeviceInstanceRecord) async throws {
        try await writes.raw(
            """
            INSERT INTO signet_device_instances (id, client_id, expires_at, data)
            VALUES (\(bind: instance.id), \(bind: instance.clientID), \(bind: Self.millis(instance.expiresAt)), \(bind: try Self.json(instance)))
            """
        ).run()
    }

    public func claimDeviceInstance(id: String, userID: String, now: Date) async throws -> Bool {
        guard var instance = try await deviceInstance(id: id), instance.expiresAt > now else { return false }
        instance.userID = userID
        // One statement decides between concurrent logins of two users: the first user_id written stays.
        return try await writes.raw(
            """
            UPDATE signet_device_instances SET user_id = \(bind: userID), data = \(bind: try Self.json(instance))
            WHERE id = \(bind: id) AND expires_at > \(bind: Self.millis(now)) AND (user_id IS NULL OR user_id = \(bind: userID)) RETURNING id
            """
        ).first() != nil
    }

    public func consumeDeviceInstance(id: String) async throws -> DeviceInstanceRecord? {
        try record(
            DeviceInstanceRecord.self, from: try await writes.raw("DELETE FROM signet_device_instances WHERE id = \(bind: id) RETURNING data").first()
        )
    }

    public func insertDevice(_ device: DeviceRecord) async throws {
        let inserted = try await writes.raw(
            """
            INSERT INTO signet_devices (instance_id, user_id, thumbprint, serial, data)
            VALUES (\(bind: device.instanceID), \(bind: device.userID), \(bind: device.certificateThumbprint), \(bind: device.certificateSerial), \(bind: try Self.json(device)))
            ON CONFLICT DO NOTHING RETURNING instance_id
            """
        ).first()
        guard inserted != nil else { throw SignetError(.conflict, "the device exists") }
    }

    /// The columns a device is read from: its record and the state kept apart from it.
    private static let deviceColumns: SQLQueryString = "data, revoked_at, revocation_reason, replaced_by, last_used_at"

    private func device(from row: (any SQLRow)?) throws -> DeviceRecord? {
        guard let row, var device = try record(DeviceRecord.self, from: row) else { return nil }
        device.revokedAt = try row.decode(column: "revoked_at", as: Int64?.self).map(Self.date)
        device.revocationReason = try row.decode(column: "revocation_reason", as: String?.self).flatMap(DeviceRevocationReason.init(rawValue:))
        device.replacedBy = try row.decode(column: "replaced_by", as: String?.self)
        device.lastUsedAt = try row.decode(column: "last_used_at", as: Int64?.self).map(Self.date)
        return device
    }

    public func device(instanceID: String) async throws -> DeviceRecord? {
        try device(from: try await lookUps.raw("SELECT \(Self.deviceColumns) FROM signet_devices WHERE instance_id = \(bind: instanceID)").first())
    }

    public func device(serial: String) async throws -> DeviceRecord? {
        try device(from: try await lookUps.raw("SELECT \(Self.deviceColumns) FROM signet_devices WHERE serial = \(bind: serial)").first())
    }

    public func devices(userID: String) async throws -> [DeviceRecord] {
        try await lookUps.raw("SELECT \(Self.deviceColumns) FROM signet_devices WHERE user_id = \(bind: userID)").all()
            .compactMap { try device(from: $0) }.sorted { $0.createdAt < $1.createdAt }
    }

    public func touchDevice(instanceID: String, at date: Date) async throws {
        let now = Self.millis(date)
        try await writes.raw(
            "UPDATE signet_devices SET last_used_at = \(bind: now) WHERE instance_id = \(bind: instanceID) AND (last_used_at IS NULL OR last_used_at <= \(bind: now - 60_000))"
        ).run()
    }

    public func renameDevice(instanceID: String, name: String) async throws -> DeviceRecord? {
        guard var device = try await device(instanceID: instanceID), device.revokedAt == nil else { return nil }
        device.name = name
        // Only the name changes in `data`; the revocation columns decide, so a lock in between stands.
        return try self.device(
            from: try await writes.raw(
                """
                UPDATE signet_devices SET data = \(bind: try Self.json(device)) WHERE instance_id = \(bind: instanceID) AND revoked_at IS NULL
                RETURNING \(Self.deviceColumns)
                """
            ).first())
    }

    public func revokeDevice(instanceID: String, reason: DeviceRevocationReason, replacedBy: String?, at date: Date) async throws -> DeviceRecord? {
        let now = Self.millis(date)
        // The grants and their refresh tokens go first (both idempotent), the device last: a failure
        // in between leaves a device that is still activated, to be revoked again, never a revoked
        // device whose grants live on. A grant bound after this point is refused anyway: refreshes
        // and the token endpoint's binding check the device.
        try await writes.raw("UPDATE signet_grants SET revoked_at = COALESCE(revoked_at, \(bind: now)) WHERE device_id = \(bind: instanceID)").run()
        try await writes.raw(
            "UPDATE signet_refresh_tokens SET used_at = \(bind: now) WHERE used_at IS NULL AND grant_id IN (SELECT id FROM signet_grants WHERE device_id = \(bind: instanceID))"
        ).run()
        // One statement decides between concurrent revocations: the first one's reason stands.
        guard
            let revoked = try device(
                from: try await writes.raw(
                    """
                    UPDATE signet_devices SET revoked_at = \(bind: now), revocation_reason = \(bind: reason.rawValue), replaced_by = \(bind: replacedBy)
                    WHERE instance_id = \(bind: instanceID) AND revoked_at IS NULL RETURNING \(Self.deviceColumns)
                    """
                ).first())
        else { return nil }
        // Its authenticators go with it, except to the installation that replaced it (same phone,
        // same keys); only the revocation that won moves them. Left behind by a failure here, they
        // are useless: every authenticator request needs the device's live certificate.
        if reason == .replaced, let replacedBy {
            try await writes.raw("UPDATE signet_authenticators SET instance_id = \(bind: replacedBy) WHERE instance_id = \(bind: instanceID)").run()
        } else {
            try await writes.raw("DELETE FROM signet_authenticators WHERE instance_id = \(bind: instanceID)").run()
        }
        return revoked
    }

    public func bindGrant(id: String, toDevice instanceID: String, replacing previous: String?) async throws -> Bool {
        try await writes.raw(
            """
            UPDATE signet_grants SET device_id = \(bind: instanceID)
            WHERE id = \(bind: id) AND (device_id IS NULL OR device_id = \(bind: instanceID) OR device_id = \(bind: previous ?? instanceID)) RETURNING id
            """
        ).first() != nil
    }

    public func insertDeviceCA(_ authority: DeviceCARecord) async throws {
        try await writes.raw(
            "INSERT INTO signet_device_cas (id, created_at, data) VALUES (\(bind: authority.id), \(bind: Self.millis(authority.createdAt)), \(bind: try Self.json(authority)))"
        ).run()
    }

    public func deviceCAs() async throws -> [DeviceCARecord] {
        try await listings.raw("SELECT data FROM signet_device_cas ORDER BY created_at DESC").all().compactMap {
            try record(DeviceCARecord.self, from: $0)
        }
    }

    public func deviceInstance(id: String) async throws -> DeviceInstanceRecord? {
        try record(DeviceInstanceRecord.self, from: try await lookUps.raw("SELECT data FROM signet_device_instances WHERE id = \(bind: id)").first())
    }
}

extension SQLStore: AuditStore {
    /// On SQLite, the event of an answer that waits for the disk is queued and written with the
    /// others of that flush, in one transaction (``InlineSQLiteDatabase/writeDeferred(_:)``); it
    /// is readable here at once, and on disk before the answer is given.
    public func appendAuditEvent(_ event: AuditEventRecord) async throws {
        let insert: SQLQueryString = """
            INSERT INTO signet_audit_events (id, at, user_id, client_id, kind, data)
            VALUES (\(bind: event.id), \(bind: Self.millis(event.at)), \(bind: event.userID), \(bind: event.clientID), \(bind: event.kind), \(bind: try Self.json(event)))
            """
        if let sqlite {
            try await sqlite.writeDeferred(insert)
        } else {
            try await writes.raw(insert).run()
        }
    }

    /// Writes the audit events still queued (SQLite), so a read, a purge or a backup sees every event recorded.
    func writeQueuedAuditEvents() async throws {
        try await sqlite?.commitPendingWrites()
    }

    public func auditEvents(userID: String, limit: Int) async throws -> [AuditEventRecord] {
        try await auditEvents(AuditQuery(userID: userID, limit: limit))
    }

    /// Each parameter is cast to its column's type: SQLite plans these listings (an index scan
    /// ordered by another column) by the values bound to bare parameters, and prepared them again
    /// at every call once any schema change had made them be prepared again (``withGrant``).
    public func auditEvents(_ query: AuditQuery) async throws -> [AuditEventRecord] {
        try await writeQueuedAuditEvents()
        var sql = SQLQueryString("SELECT data FROM signet_audit_events WHERE 1 = 1")
        func condition(_ text: String, _ value: any Encodable & Sendable, as type: String) {
            sql.appendInterpolation(unsafeRaw: " AND \(text) CAST(")
            sql.appendInterpolation(bind: value)
            sql.appendInterpolation(unsafeRaw: " AS \(type))")
        }
        if let userID = query.userID { condition("user_id =", userID, as: "TEXT") }
        if let clientID = query.clientID { condition("client_id =", clientID, as: "TEXT") }
        if let since = query.since { condition("at >=", Self.millis(since), as: "BIGINT") }
        sql.appendInterpolation(unsafeRaw: " ORDER BY at DESC, seq DESC LIMIT CAST(")
        sql.appendInterpolation(bind: query.limit)
        sql.appendInterpolation(unsafeRaw: " AS BIGINT)")
        return try await listings.raw(sql).all().compactMap { try record(AuditEventRecord.self, from: $0) }
    }

    public func purgeAuditEvents(before cutoff: Date) async throws -> Int {
        // In batches, so no one statement holds the writer (and, in `signet serve`, an event loop)
        // for long after the retention is shortened.
        try await writeQueuedAuditEvents()
        var purged = 0
        while true {
            let rows = try await writes.raw(
                """
                DELETE FROM signet_audit_events WHERE seq IN
                (SELECT seq FROM signet_audit_events WHERE at < \(bind: Self.millis(cutoff)) LIMIT \(bind: Self.purgeBatch)) RETURNING seq
                """
            ).all()
            purged += rows.count
            if rows.count < Self.purgeBatch { return purged }
        }
    }

    /// Audit events deleted per statement by ``purgeAuditEvents(before:)``.
    static let purgeBatch = 1000
}
