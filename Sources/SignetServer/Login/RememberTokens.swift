// Remember-User-ID tokens: which user to pre-fill or skip the username for, per client.
import Foundation
import SignetCore
import SignetStore

/// Remember-User-ID tokens (NemID): opaque, bound to one client and one user, revocable,
/// and never a credential: they only pre-fill or skip the username.
struct RememberTokens: Sendable {
    let server: ServerContext
    let tokens: any RememberTokenStore
    let users: any UserStore
    let rememberTokenLifetime: TimeInterval

    func issue(clientID: String, userID: String) async throws -> String {
        let token = server.random.token()
        let now = server.now()
        try await tokens.insertRememberToken(
            RememberTokenRecord(
                tokenHash: SecretDigest.hex(token), clientID: clientID, userID: userID, createdAt: now,
                expiresAt: now.addingTimeInterval(rememberTokenLifetime)))
        return token
    }

    /// The user a token remembers for `clientID`; `nil` for unknown, expired or another client's tokens.
    func user(for token: String, clientID: String) async throws -> UserRecord? {
        guard token.utf8.count <= 128, let record = try await tokens.rememberToken(hash: SecretDigest.hex(token)),
            record.clientID == clientID, record.expiresAt > server.now()
        else { return nil }
        return try await users.user(id: record.userID)
    }

    func revoke(_ token: String) async throws {
        guard token.utf8.count <= 128 else { return }
        try await tokens.deleteRememberToken(hash: SecretDigest.hex(token))
    }
}
