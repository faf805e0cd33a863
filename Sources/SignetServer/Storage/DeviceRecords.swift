// What the provider stores about app installations (devices).
import Foundation
import SignetCore

/// An instance id handed to an app installation before it activates (MEPi's instance id).
///
/// Random and unguessable; it lives ``DeviceInstances/lifetime`` unless activated, and belongs
/// to the client that asked for it. The user logs in with it as the OpenID Connect `nonce` (or
/// in a `claims` request for `instance_id`), and the grant remembers it.
public struct DeviceInstanceRecord: Sendable, Equatable, Codable {
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

    enum CodingKeys: String, CodingKey {
        case id
        case clientID = "client_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case userID = "user_id"
        case attestation
        case budgetKey = "budget_key"
    }
}

/// A device CA as stored: its key and self-signed certificate in PEM, like the signing keys.
///
/// The newest is the one that issues; older ones stay trusted until their certificates (and
/// so every device certificate they issued) expire.
public struct DeviceCARecord: Sendable, Equatable, Codable {
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
public struct DeviceRecord: Sendable, Equatable, Codable {
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

/// One entry of the audit trail: who did what to whom, when and why.
///
/// Stored, not only logged (`signet devices events USER`); the operations issue adds the
/// other kinds of event to this same trail.
public struct AuditEventRecord: Sendable, Equatable, Codable {
    public var id: String
    public var at: Date
    /// What happened, e.g. `device.activated`, `device.locked`.
    public var kind: String
    /// Whose account it concerns.
    public var userID: String?
    public var clientID: String?
    /// Who did it: `device`, `user`, `admin` or `system`.
    public var actor: String
    /// What it was done to, e.g. the instance id.
    public var target: String?
    /// Why, as given by the actor (free text, at most 200 characters).
    public var reason: String?

    public init(id: String, at: Date, kind: String, userID: String?, clientID: String?, actor: String, target: String?, reason: String?) {
        self.id = id
        self.at = at
        self.kind = kind
        self.userID = userID
        self.clientID = clientID
        self.actor = actor
        self.target = target
        self.reason = reason
    }
}

extension AuditEventRecord: JSONObjectWritable {
    /// The `Codable` members in sorted order, as the store's encoder writes records (one is
    /// stored on every token request; ``JSONObjectWritable``).
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("actor", actor)
        object.member("at", millisecondsOf: at)
        object.member("clientID", clientID)
        object.member("id", id)
        object.member("kind", kind)
        object.member("reason", reason)
        object.member("target", target)
        object.member("userID", userID)
    }
}
