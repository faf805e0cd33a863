// What the provider stores about app installations (devices), and where.
import Foundation
import SignetCore

/// An instance id handed to an app installation before it activates (MEPi's instance id).
///
/// Random and unguessable; it lives ``DeviceInstances/lifetime`` unless activated, and belongs
/// to the client that asked for it. The user logs in with it as the OpenID Connect `nonce` (or
/// in a `claims` request for `instance_id`), and the grant remembers it.
public struct DeviceInstanceRecord: Sendable, Equatable {
    /// The instance id (43 base64url characters, 256 bits).
    public var id: String
    /// The client (app) it was issued to.
    public var clientID: String
    public var createdAt: Date
    /// When it is forgotten unless activated.
    public var expiresAt: Date
    /// The user whose login first bound it; nobody else's login may.
    public var userID: String?
    /// What vouched for the key of its initial certificate (``AttestationResult/kind``), when it had one.
    public var attestation: String?
    /// The budget it was counted in (the asking address's), given back when it is activated.
    public var budgetKey: String?

    public init(id: String, clientID: String, createdAt: Date, expiresAt: Date) {
        self.id = id
        self.clientID = clientID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A device CA as stored: its key and self-signed certificate in PEM, like the signing keys.
///
/// The newest is the one that issues; older ones stay trusted until their certificates (and
/// so every device certificate they issued) expire.
public struct DeviceCARecord: Sendable, Equatable {
    /// The SHA-256 fingerprint of the CA certificate (hex).
    public var id: String
    public var privateKeyPEM: String
    public var certificatePEM: String
    public var createdAt: Date
    /// The CA certificate's notAfter.
    public var notAfter: Date

    public init(id: String, privateKeyPEM: String, certificatePEM: String, createdAt: Date, notAfter: Date) {
        self.id = id
        self.privateKeyPEM = privateKeyPEM
        self.certificatePEM = certificatePEM
        self.createdAt = createdAt
        self.notAfter = notAfter
    }
}

/// An activated app installation: the certificate issued to its device key.
///
/// What changes after activation lives apart from the rest in the SQL store (`revoked_at`,
/// `revocation_reason`, `last_used_at` columns), so a rename can never undo a lock.
public struct DeviceRecord: Sendable, Equatable {
    /// The instance id (also in the certificate's SAN URI `urn:signet:device:<id>`).
    public var instanceID: String
    public var clientID: String
    public var userID: String
    /// The grant of the login that activated it.
    public var grantID: String
    /// The certificate's serial number (hex) and SHA-256 thumbprint (RFC 8705 `x5t#S256`).
    public var certificateSerial: String
    public var certificateThumbprint: String
    public var certificateNotAfter: Date
    /// What vouched for the device key (``AttestationResult/kind``): `none` with the development verifier.
    public var attestation: String
    /// What the user calls it ("Alice's iPhone"), at most 64 characters.
    public var name: String?
    /// `ios`, `android`, `macos`, `linux` or `other`, as the app said at activation.
    public var platform: String?
    public var createdAt: Date
    /// The last request the device authenticated with its certificate (to the minute).
    public var lastUsedAt: Date?
    /// Set when the certificate is revoked (deactivation, reactivation, removal, loss).
    public var revokedAt: Date?
    public var revocationReason: DeviceRevocationReason?
    /// The instance that replaced this one by reactivation.
    public var replacedBy: String?

    public init(
        instanceID: String, clientID: String, userID: String, grantID: String, certificateSerial: String, certificateThumbprint: String,
        certificateNotAfter: Date, attestation: String = "none", name: String? = nil, platform: String? = nil, createdAt: Date, revokedAt: Date? = nil
    ) {
        self.instanceID = instanceID
        self.clientID = clientID
        self.userID = userID
        self.grantID = grantID
        self.certificateSerial = certificateSerial
        self.certificateThumbprint = certificateThumbprint
        self.certificateNotAfter = certificateNotAfter
        self.attestation = attestation
        self.name = name
        self.platform = platform
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// `activated`, or why it no longer is.
    public var status: String { revocationReason?.rawValue ?? (revokedAt == nil ? "activated" : "revoked") }
}

/// Why a device's certificate was revoked.
public enum DeviceRevocationReason: String, Sendable, Codable, CaseIterable {
    /// The app deactivated itself.
    case deactivated
    /// Reactivation gave the installation a new instance id, key and certificate.
    case replaced
    /// The user or a helpdesk removed it.
    case removed
    /// Reported lost or stolen: locked by the user or a helpdesk.
    case locked
}

/// App installations: instance ids before activation (and, later, activated devices).
public protocol DeviceStore: Sendable {
    func insertDeviceInstance(_ instance: DeviceInstanceRecord) async throws
    /// The instance with this id, expired or not (the caller compares `expiresAt`).
    func deviceInstance(id: String) async throws -> DeviceInstanceRecord?
    /// Binds the live instance to `userID` unless another user's login bound it first; `false` then
    /// (or when it is unknown or expired). Atomic: of concurrent logins of two users one wins.
    func claimDeviceInstance(id: String, userID: String, now: Date) async throws -> Bool
    /// Removes and returns the instance; exactly one concurrent caller gets it (activation is single use).
    func consumeDeviceInstance(id: String) async throws -> DeviceInstanceRecord?
    func insertDevice(_ device: DeviceRecord) async throws
    func device(instanceID: String) async throws -> DeviceRecord?
    /// A user's devices, oldest first.
    func devices(userID: String) async throws -> [DeviceRecord]
    /// The device whose certificate has this serial number (hex), revoked or not.
    func device(serial: String) async throws -> DeviceRecord?
    /// Records a use, at most once a minute (a write per request would cost more than the request).
    func touchDevice(instanceID: String, at: Date) async throws
    /// Renames a live device; `nil` when it is unknown or revoked.
    func renameDevice(instanceID: String, name: String) async throws -> DeviceRecord?
    /// Revokes the device's certificate, its grants and their refresh tokens, at once; returns the
    /// revoked record, or `nil` when it is unknown or was already revoked (exactly one concurrent
    /// caller revokes it).
    func revokeDevice(instanceID: String, reason: DeviceRevocationReason, replacedBy: String?, at: Date) async throws -> DeviceRecord?
    /// Ties a live grant to an activated device (its tokens are bound to the device's certificate);
    /// `false` when the grant is tied to another device already, other than `previous` (the
    /// device a reactivation replaces, whose fresh login moves to the new one).
    func bindGrant(id: String, toDevice instanceID: String, replacing previous: String?) async throws -> Bool
    func insertDeviceCA(_ authority: DeviceCARecord) async throws
    /// Every stored device CA, newest first.
    func deviceCAs() async throws -> [DeviceCARecord]
}

extension DeviceInstanceRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: DeviceInstanceRecord(id: "", clientID: "", createdAt: .distantPast, expiresAt: .distantPast),
        [
            .member("id", \.id), .member("client_id", \.clientID), .member("created_at", \.createdAt), .member("expires_at", \.expiresAt),
            .member("user_id", \.userID), .member("attestation", \.attestation), .member("budget_key", \.budgetKey),
        ])
}

extension DeviceCARecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: DeviceCARecord(id: "", privateKeyPEM: "", certificatePEM: "", createdAt: .distantPast, notAfter: .distantPast),
        [
            .member("id", \.id), .member("privateKeyPEM", \.privateKeyPEM), .member("certificatePEM", \.certificatePEM),
            .member("createdAt", \.createdAt), .member("notAfter", \.notAfter),
        ])
}

extension DeviceRevocationReason: StoredValue {}

extension DeviceRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1,
        blank: DeviceRecord(
            instanceID: "", clientID: "", userID: "", grantID: "", certificateSerial: "", certificateThumbprint: "",
            certificateNotAfter: .distantPast,
            createdAt: .distantPast),
        [
            .member("instanceID", \.instanceID), .member("clientID", \.clientID), .member("userID", \.userID), .member("grantID", \.grantID),
            .member("certificateSerial", \.certificateSerial), .member("certificateThumbprint", \.certificateThumbprint),
            .member("certificateNotAfter", \.certificateNotAfter), .member("attestation", \.attestation), .member("name", \.name),
            .member("platform", \.platform), .member("createdAt", \.createdAt), .member("lastUsedAt", \.lastUsedAt),
            .member("revokedAt", \.revokedAt), .member("revocationReason", \.revocationReason), .member("replacedBy", \.replacedBy),
        ])
}
