// The provider's record of one device, as the device endpoints send it (docs/devices.md).
import Foundation

/// One app installation as the provider keeps it: the `device` object of the device endpoints.
public struct RegisteredDevice: Sendable, Equatable, Codable {
    /// status — where the device stands; an unknown value is kept as sent.
    public struct Status: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
        public var description: String { rawValue }

        /// Its current certificate authenticates it.
        public static let activated = Status(rawValue: "activated")
        /// The device deactivated itself.
        public static let deactivated = Status(rawValue: "deactivated")
        /// A reactivation gave the installation a new certificate under a new instance id.
        public static let replaced = Status(rawValue: "replaced")
        /// The user or a helpdesk removed it.
        public static let removed = Status(rawValue: "removed")
        /// The user or a helpdesk locked it (a lost phone).
        public static let locked = Status(rawValue: "locked")
    }

    /// instance_id — the installation's id (43 base64url characters).
    public var instanceID: String
    /// status
    public var status: Status
    /// name — what the user calls it ("Alice's iPhone").
    public var name: String?
    /// platform
    public var platform: DevicePlatform?
    /// certificate_serial — the current certificate's serial, lowercase hex.
    public var certificateSerial: String?
    /// certificate_not_after — when the current certificate expires.
    public var certificateNotAfter: Date?
    /// reactivation_due_at — from when a reactivation is due (14 days before expiry).
    public var reactivationDueAt: Date?
    /// attestation — the kind of attestation the device was activated with (`none` in development).
    public var attestation: String?
    /// created_at
    public var createdAt: Date?
    /// last_used_at
    public var lastUsedAt: Date?
    /// revoked_at
    public var revokedAt: Date?
    /// revocation_reason
    public var revocationReason: String?

    public init(
        instanceID: String, status: Status, name: String? = nil, platform: DevicePlatform? = nil, certificateSerial: String? = nil,
        certificateNotAfter: Date? = nil, reactivationDueAt: Date? = nil, attestation: String? = nil, createdAt: Date? = nil,
        lastUsedAt: Date? = nil, revokedAt: Date? = nil, revocationReason: String? = nil
    ) {
        self.instanceID = instanceID
        self.status = status
        self.name = name
        self.platform = platform
        self.certificateSerial = certificateSerial
        self.certificateNotAfter = certificateNotAfter
        self.reactivationDueAt = reactivationDueAt
        self.attestation = attestation
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
        self.revocationReason = revocationReason
    }

    enum CodingKeys: String, CodingKey {
        case instanceID = "instance_id", status, name, platform
        case certificateSerial = "certificate_serial", certificateNotAfter = "certificate_not_after"
        case reactivationDueAt = "reactivation_due_at", attestation
        case createdAt = "created_at", lastUsedAt = "last_used_at", revokedAt = "revoked_at", revocationReason = "revocation_reason"
    }
}

/// platform — the kind of device, as activation takes it and records carry it.
public struct DevicePlatform: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }

    public static let ios = DevicePlatform(rawValue: "ios")
    public static let android = DevicePlatform(rawValue: "android")
    public static let macos = DevicePlatform(rawValue: "macos")
    public static let linux = DevicePlatform(rawValue: "linux")
    public static let other = DevicePlatform(rawValue: "other")

    /// The platform this code runs on.
    public static var current: DevicePlatform {
        #if os(iOS)
            return .ios
        #elseif os(macOS)
            return .macos
        #elseif os(Linux)
            return .linux
        #else
            return .other
        #endif
    }
}
