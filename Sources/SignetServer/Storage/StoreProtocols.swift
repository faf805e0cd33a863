// The storage the provider needs, as small protocols. SignetStorage implements them in SQL;
// MemoryStore implements them in memory for fast tests.
import Foundation

/// Registered clients.
public protocol ClientStore: Sendable {
    func client(id: String) async throws -> ClientRecord?
    /// Adds a client; throws `SignetError(.conflict)` when the id is taken.
    func insertClient(_ client: ClientRecord) async throws
    func listClients() async throws -> [ClientRecord]
    /// Removes a client; `false` when there was none.
    func deleteClient(id: String) async throws -> Bool
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
    func updatePasswordHash(userID: String, passwordHash: String) async throws -> Bool
}

/// The provider's own signing keys.
public protocol SigningKeyStore: Sendable {
    func signingKeys() async throws -> [SigningKeyRecord]
    func insertSigningKey(_ key: SigningKeyRecord) async throws
    func updateSigningKey(kid: String, status: SigningKeyRecord.Status, publishUntil: Date?) async throws
    func deleteSigningKey(kid: String) async throws
}

/// What redeeming a single-use value found.
public enum Redemption<Record: Sendable & Equatable>: Sendable, Equatable {
    /// This caller won: the record, now marked used.
    case redeemed(Record)
    /// It had been used before: a replay. Carries the grant it belongs to.
    case alreadyUsed(grantID: String)
    /// No such value.
    case unknown
}

/// Authorization requests in progress, codes, grants and refresh tokens.
public protocol GrantStore: Sendable {
    func insertPendingAuthorization(_ pending: PendingAuthorizationRecord) async throws
    func pendingAuthorization(id: String) async throws -> PendingAuthorizationRecord?
    /// Removes and returns the pending request; exactly one concurrent caller gets it.
    func consumePendingAuthorization(id: String) async throws -> PendingAuthorizationRecord?

    func insertGrant(_ grant: GrantRecord) async throws
    func grant(id: String) async throws -> GrantRecord?
    /// Marks the grant and every refresh token of it revoked.
    func revokeGrant(id: String, at: Date) async throws

    func insertCode(_ code: AuthorizationCodeRecord) async throws
    /// Marks the code redeemed; exactly one concurrent caller gets `.redeemed`.
    func redeemCode(hash: String, at: Date) async throws -> Redemption<AuthorizationCodeRecord>

    func insertRefreshToken(_ token: RefreshTokenRecord) async throws
    func refreshToken(hash: String) async throws -> RefreshTokenRecord?
    /// Marks the refresh token used; exactly one concurrent caller gets `.redeemed`.
    func useRefreshToken(hash: String, at: Date) async throws -> Redemption<RefreshTokenRecord>
}

/// Signed-in browsers.
public protocol SessionStore: Sendable {
    func insertSession(_ session: BrowserSessionRecord) async throws
    func session(idHash: String) async throws -> BrowserSessionRecord?
    func deleteSession(idHash: String) async throws
}

/// Values that may be seen once only, such as client-assertion `jti`s.
public protocol ReplayStore: Sendable {
    /// Records `key` until `expiresAt`; `true` for the first caller, `false` for every later one.
    func recordOnce(key: String, expiresAt: Date, now: Date) async throws -> Bool
}

/// Counters of failed sign-ins.
public protocol ThrottleStore: Sendable {
    func throttle(key: String) async throws -> ThrottleRecord?
    /// Adds one failure atomically, starting afresh when the last one is older than `resetBefore`.
    func recordFailure(key: String, at: Date, resetBefore: Date) async throws -> ThrottleRecord
    func resetThrottle(key: String) async throws
}

/// Removal of what has expired.
public protocol ExpiryStore: Sendable {
    func purgeExpired(before: Date) async throws
}

/// Everything the provider stores.
public typealias SignetStore = ClientStore & UserStore & SigningKeyStore & GrantStore & SessionStore & ReplayStore
    & ThrottleStore & ExpiryStore
