// A person who can sign in and where people are kept.
import Foundation

/// A person who can sign in.
public struct UserRecord: Sendable, Equatable, Codable {
    /// The stable subject identifier (`sub`), a random UUID.
    public var id: String
    /// The sign-in name, stored in lower case.
    public var username: String
    /// The password hash in the hasher's own format (bcrypt `$2b$…`).
    public var passwordHash: String
    public var name: String?
    public var email: String?
    public var phoneNumber: String?
    /// A locked user cannot sign in; locking also ends every session and grant.
    public var locked: Bool
    /// Changes whenever the password is set or the user is locked, so a login that checked the
    /// old password cannot finish after the change. `nil` for users stored before it existed.
    public var securityStamp: String?
    public var createdAt: Date

    public init(
        id: String, username: String, passwordHash: String, name: String? = nil, email: String? = nil, phoneNumber: String? = nil,
        locked: Bool = false, securityStamp: String? = nil, createdAt: Date
    ) {
        self.securityStamp = securityStamp
        self.id = id
        self.username = username
        self.passwordHash = passwordHash
        self.name = name
        self.email = email
        self.phoneNumber = phoneNumber
        self.locked = locked
        self.createdAt = createdAt
    }

    // The stored names are the property names; members added later are optional when read.
    enum CodingKeys: String, CodingKey {
        case id, username, passwordHash, name, email, phoneNumber, locked, securityStamp, createdAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        username = try container.decode(String.self, forKey: .username)
        passwordHash = try container.decode(String.self, forKey: .passwordHash)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        phoneNumber = try container.decodeIfPresent(String.self, forKey: .phoneNumber)
        locked = try container.decodeIfPresent(Bool.self, forKey: .locked) ?? false
        securityStamp = try container.decodeIfPresent(String.self, forKey: .securityStamp)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
    }
}

/// People who can sign in.
public protocol UserStore: Sendable {
    func user(id: String) async throws -> UserRecord?
    /// The user with this (lower-cased) username.
    func user(username: String) async throws -> UserRecord?
    /// Adds a user; throws `SignetError(.conflict)` when the username or id is taken.
    func insertUser(_ user: UserRecord) async throws
    func listUsers() async throws -> [UserRecord]
    func deleteUser(id: String) async throws -> Bool
    /// Replaces a user's record (same id and username) if its security stamp is still
    /// `expectedStamp` (compare-and-swap, so two administrators' changes cannot undo each other);
    /// `false` when there is no such user or the stamp has changed.
    func replaceUser(_ user: UserRecord, expectedStamp: String?) async throws -> Bool
}
