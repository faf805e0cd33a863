// App installations in SQL.
import Foundation
import SQLKit
import SignetCore
import SignetServer

extension SQLStore: DeviceStore {
    public func insertDeviceInstance(_ instance: DeviceInstanceRecord) async throws {
        try await database.raw(
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
        return try await database.raw(
            """
            UPDATE signet_device_instances SET user_id = \(bind: userID), data = \(bind: try Self.json(instance))
            WHERE id = \(bind: id) AND expires_at > \(bind: Self.millis(now)) AND (user_id IS NULL OR user_id = \(bind: userID)) RETURNING id
            """
        ).first() != nil
    }

    public func consumeDeviceInstance(id: String) async throws -> DeviceInstanceRecord? {
        try Self.record(DeviceInstanceRecord.self, from: try await database.raw("DELETE FROM signet_device_instances WHERE id = \(bind: id) RETURNING data").first())
    }

    public func insertDevice(_ device: DeviceRecord) async throws {
        let inserted = try await database.raw(
            """
            INSERT INTO signet_devices (instance_id, user_id, thumbprint, data)
            VALUES (\(bind: device.instanceID), \(bind: device.userID), \(bind: device.certificateThumbprint), \(bind: try Self.json(device)))
            ON CONFLICT DO NOTHING RETURNING instance_id
            """
        ).first()
        guard inserted != nil else { throw SignetError(.conflict, "the device exists") }
    }

    public func device(instanceID: String) async throws -> DeviceRecord? {
        try Self.record(DeviceRecord.self, from: try await database.raw("SELECT data FROM signet_devices WHERE instance_id = \(bind: instanceID)").first())
    }

    public func devices(userID: String) async throws -> [DeviceRecord] {
        try await database.raw("SELECT data FROM signet_devices WHERE user_id = \(bind: userID)").all()
            .compactMap { try Self.record(DeviceRecord.self, from: $0) }.sorted { $0.createdAt < $1.createdAt }
    }

    public func insertDeviceCA(_ authority: DeviceCARecord) async throws {
        try await database.raw(
            "INSERT INTO signet_device_cas (id, created_at, data) VALUES (\(bind: authority.id), \(bind: Self.millis(authority.createdAt)), \(bind: try Self.json(authority)))"
        ).run()
    }

    public func deviceCAs() async throws -> [DeviceCARecord] {
        try await database.raw("SELECT data FROM signet_device_cas ORDER BY created_at DESC").all().compactMap { try Self.record(DeviceCARecord.self, from: $0) }
    }

    public func deviceInstance(id: String) async throws -> DeviceInstanceRecord? {
        try Self.record(DeviceInstanceRecord.self, from: try await database.raw("SELECT data FROM signet_device_instances WHERE id = \(bind: id)").first())
    }
}
