// A person who can sign in and where people are kept.
import Foundation

/// A person who can sign in.
public struct UserRecord: Sendable, Equatable {
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

extension UserRecord: StoredRecord {
    // `locked` came later: a text without it is an unlocked user.
    public static let format = RecordFormat(
        version: 1, blank: UserRecord(id: "", username: "", passwordHash: "", createdAt: .distantPast),
        [
            .member("id", \.id), .member("username", \.username), .member("passwordHash", \.passwordHash), .member("name", \.name),
            .member("email", \.email), .member("phoneNumber", \.phoneNumber), .member("locked", \.locked, required: false),
            .member("securityStamp", \.securityStamp), .member("createdAt", \.createdAt),
        ])
}
