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
    }
}
