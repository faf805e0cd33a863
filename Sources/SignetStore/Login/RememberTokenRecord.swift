// Remember-User-ID tokens and where they are kept.
import Foundation

/// A Remember-User-ID token (NemID): names a user to one client, but proves nothing.
public struct RememberTokenRecord: Sendable, Equatable {
    public var tokenHash: String
    public var clientID: String
    public var userID: String
    public var createdAt: Date
    public var expiresAt: Date

    public init(tokenHash: String, clientID: String, userID: String, createdAt: Date, expiresAt: Date) {
        self.tokenHash = tokenHash
        self.clientID = clientID
        self.userID = userID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// Remember-User-ID tokens.
public protocol RememberTokenStore: Sendable {
    func insertRememberToken(_ token: RememberTokenRecord) async throws
    func rememberToken(hash: String) async throws -> RememberTokenRecord?
    func deleteRememberToken(hash: String) async throws
    /// Revokes every remember token of a user; returns how many there were.
    func deleteRememberTokens(userID: String) async throws -> Int
}

extension RememberTokenRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: RememberTokenRecord(tokenHash: "", clientID: "", userID: "", createdAt: .distantPast, expiresAt: .distantPast),
        [
            .member("tokenHash", \.tokenHash), .member("clientID", \.clientID), .member("userID", \.userID), .member("createdAt", \.createdAt),
            .member("expiresAt", \.expiresAt),
        ])
}
