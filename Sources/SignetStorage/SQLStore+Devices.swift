// App installations in SQL.
import Foundation
import SQLKit
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

    public func deviceInstance(id: String) async throws -> DeviceInstanceRecord? {
        try Self.record(DeviceInstanceRecord.self, from: try await database.raw("SELECT data FROM signet_device_instances WHERE id = \(bind: id)").first())
    }
}
