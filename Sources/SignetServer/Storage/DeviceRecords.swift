// What the provider stores about app installations (devices).
import Foundation

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
    /// What vouched for the device key: `none` until an attestation verifier is configured.
    public var attestation: String
    public var createdAt: Date
    /// Set when the certificate is revoked (deactivation, reactivation, loss).
    public var revokedAt: Date?

    public init(
        instanceID: String, clientID: String, userID: String, grantID: String, certificateSerial: String, certificateThumbprint: String,
        certificateNotAfter: Date, attestation: String = "none", createdAt: Date, revokedAt: Date? = nil
    ) {
        self.instanceID = instanceID
        self.clientID = clientID
        self.userID = userID
        self.grantID = grantID
        self.certificateSerial = certificateSerial
        self.certificateThumbprint = certificateThumbprint
        self.certificateNotAfter = certificateNotAfter
        self.attestation = attestation
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}
