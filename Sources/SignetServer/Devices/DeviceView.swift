// A device as the device endpoints show it (docs/devices.md).
import Foundation
import SignetStore

/// A device record for the app and the user: no certificate thumbprint, no grant.
struct DeviceView: Encodable, Sendable {
    let instanceID: String
    let status: String
    let name: String?
    let platform: String?
    let certificateSerial: String
    let certificateNotAfter: Int
    let reactivationDueAt: Int
    let attestation: String
    let createdAt: Int
    let lastUsedAt: Int?
    let revokedAt: Int?
    let revocationReason: String?

    /// - Parameter reactivationWindow: how long before expiry reactivation is due.
    init(_ device: DeviceRecord, reactivationWindow: TimeInterval) {
        instanceID = device.instanceID
        status = device.status
        name = device.name
        platform = device.platform
        certificateSerial = device.certificateSerial
        certificateNotAfter = Int(device.certificateNotAfter.timeIntervalSince1970)
        reactivationDueAt = Int(device.certificateNotAfter.addingTimeInterval(-reactivationWindow).timeIntervalSince1970)
        attestation = device.attestation
        createdAt = Int(device.createdAt.timeIntervalSince1970)
        lastUsedAt = device.lastUsedAt.map { Int($0.timeIntervalSince1970) }
        revokedAt = device.revokedAt.map { Int($0.timeIntervalSince1970) }
        revocationReason = device.revocationReason?.rawValue
    }

    enum CodingKeys: String, CodingKey {
        case status, name, platform, attestation
        case instanceID = "instance_id"
        case certificateSerial = "certificate_serial"
        case certificateNotAfter = "certificate_not_after"
        case reactivationDueAt = "reactivation_due_at"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case revokedAt = "revoked_at"
        case revocationReason = "revocation_reason"
    }

    /// Encodes the optional members as `null` rather than leaving them out, so the shape is fixed.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(instanceID, forKey: .instanceID)
        try container.encode(status, forKey: .status)
        try container.encode(name, forKey: .name)
        try container.encode(platform, forKey: .platform)
        try container.encode(certificateSerial, forKey: .certificateSerial)
        try container.encode(certificateNotAfter, forKey: .certificateNotAfter)
        try container.encode(reactivationDueAt, forKey: .reactivationDueAt)
        try container.encode(attestation, forKey: .attestation)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastUsedAt, forKey: .lastUsedAt)
        try container.encode(revokedAt, forKey: .revokedAt)
        try container.encode(revocationReason, forKey: .revocationReason)
    }
}

/// `{"device": …}` and `{"certificate_chain": […], "device": …}`.
struct DeviceAnswer: Encodable, Sendable {
    var certificateChain: [String]?
    let device: DeviceView

    enum CodingKeys: String, CodingKey {
        case device
        case certificateChain = "certificate_chain"
    }
}
