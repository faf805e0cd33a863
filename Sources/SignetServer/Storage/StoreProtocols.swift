// The storage the provider needs, as small protocols. SignetStorage implements them in SQL;
// MemoryStore implements them in memory for fast tests.
import Foundation

/// Registered clients.
public protocol ClientStore: Sendable {
    func client(id: String) async throws -> ClientRecord?
    /// Adds a client; throws `SignetError(.conflict)` when the id is taken.
    func insertClient(_ client: ClientRecord) async throws
    func listClients() async throws -> [ClientRecord]
    /// Replaces a client's registration; `false` when there is none.
    func replaceClient(_ client: ClientRecord) async throws -> Bool
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
    /// Replaces a user's record (same id and username) if its security stamp is still
    /// `expectedStamp` (compare-and-swap, so two administrators' changes cannot undo each other);
    /// `false` when there is no such user or the stamp has changed.
    func replaceUser(_ user: UserRecord, expectedStamp: String?) async throws -> Bool
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

/// What spending a single-use row (a code or a refresh token) found, read in the same step as
/// the spend: the winner gets the row's grant and the grant's user as they stand at the spend,
/// so a revocation or a lock made before it is seen, and none made after it can be.
public struct Spend<Record: Sendable & Equatable>: Sendable {
    public var redemption: Redemption<Record>
    /// The winner's grant; `nil` for the others, or when there is none.
    public var grant: GrantRecord?
    /// The winner's grant's user; `nil` for the others, or when there is none.
    public var user: UserRecord?

    public init(_ redemption: Redemption<Record>, grant: GrantRecord? = nil, user: UserRecord? = nil) {
        self.redemption = redemption
        self.grant = grant
        self.user = user
    }
}

/// Authorization requests in progress, codes, grants and refresh tokens.
public protocol GrantStore: Sendable {
    /// Does not bind the answer to the disk (``WriteBinding``), nor do the two below: a login's
    /// single use and its counts hold in a power failure only through the binding writes that
    /// go with them (failures, budgets, a code's redemption). A new caller that relies on these
    /// alone for a check must make its answer bind.
    func insertLoginSession(_ session: LoginSessionRecord) async throws
    func loginSession(id: String) async throws -> LoginSessionRecord?
    /// Writes `session` (whose version must be `expectedVersion + 1`) if the stored one is still
    /// at `expectedVersion`; `false` when another change came first.
    func replaceLoginSession(_ session: LoginSessionRecord, expectedVersion: Int) async throws -> Bool
    /// Removes and returns the session; exactly one concurrent caller gets it.
    func consumeLoginSession(id: String) async throws -> LoginSessionRecord?

    /// Does not bind the answer to the disk (``WriteBinding``): a grant is used through a code or token.
    func insertGrant(_ grant: GrantRecord) async throws
    func grant(id: String) async throws -> GrantRecord?
    /// Marks the grant and every refresh token of it revoked; `true` when the grant was live
    /// until now (revoking again, or an unknown id, changes nothing).
    @discardableResult
    func revokeGrant(id: String, at: Date) async throws -> Bool
    /// Revokes every grant of a user and their refresh tokens; returns how many grants were live.
    func revokeGrants(userID: String, at: Date) async throws -> Int

    /// Does not bind the answer to the disk (``WriteBinding``): its redemption does.
    func insertCode(_ code: AuthorizationCodeRecord) async throws
    /// The code without using it, so a request can be checked before the code is spent.
    func code(hash: String) async throws -> AuthorizationCodeRecord?
    /// The code and, while it is unredeemed, its grant (`nil` when there is none), read together;
    /// as ``code(hash:)`` then ``grant(id:)``, which the default does. A redeemed code's grant is
    /// not read: a replay is answered (and its grant revoked) even if that grant cannot be read.
    func codeWithGrant(hash: String) async throws -> (code: AuthorizationCodeRecord, grant: GrantRecord?)?
    /// Marks the code redeemed; exactly one concurrent caller gets `.redeemed`, and with it, read
    /// in the same step, the code's grant and its user as they stand at the spend (``Spend``), so
    /// a revocation made before the spend is seen and none made by a replay after it can be.
    func redeemCodeWithGrant(hash: String, at: Date) async throws -> Spend<AuthorizationCodeRecord>

    func insertRefreshToken(_ token: RefreshTokenRecord) async throws
    func refreshToken(hash: String) async throws -> RefreshTokenRecord?
    /// The refresh token and, while it is unused, its grant (`nil` when there is none), read
    /// together; as ``refreshToken(hash:)`` then ``grant(id:)``, which the default does.
    func refreshTokenWithGrant(hash: String) async throws -> (token: RefreshTokenRecord, grant: GrantRecord?)?
    /// Marks the refresh token used; exactly one concurrent caller gets `.redeemed`, with the
    /// token's grant and its user as they stand at the spend, as ``redeemCodeWithGrant(hash:at:)``.
    func useRefreshTokenWithGrant(hash: String, at: Date) async throws -> Spend<RefreshTokenRecord>
}

extension GrantStore {
    public func codeWithGrant(hash: String) async throws -> (code: AuthorizationCodeRecord, grant: GrantRecord?)? {
        guard let code = try await code(hash: hash) else { return nil }
        return (code, code.redeemedAt == nil ? try await grant(id: code.grantID) : nil)
    }

    public func refreshTokenWithGrant(hash: String) async throws -> (token: RefreshTokenRecord, grant: GrantRecord?)? {
        guard let token = try await refreshToken(hash: hash) else { return nil }
        return (token, token.usedAt == nil ? try await grant(id: token.grantID) : nil)
    }

    /// ``redeemCodeWithGrant(hash:at:)`` without the grant and its user.
    public func redeemCode(hash: String, at date: Date) async throws -> Redemption<AuthorizationCodeRecord> {
        try await redeemCodeWithGrant(hash: hash, at: date).redemption
    }

    /// ``useRefreshTokenWithGrant(hash:at:)`` without the grant and its user.
    public func useRefreshToken(hash: String, at date: Date) async throws -> Redemption<RefreshTokenRecord> {
        try await useRefreshTokenWithGrant(hash: hash, at: date).redemption
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

/// Named secrets the provider makes for itself (such as the OTP hashing key).
public protocol SecretStore: Sendable {
    /// The secret called `name`, storing `candidate` first if there is none yet; every instance gets the same value.
    func secret(named name: String, orStore candidate: String) async throws -> String
}

/// Signed-in browsers.
public protocol SessionStore: Sendable {
    /// Does not bind the answer to the disk (``WriteBinding``); ending a session does.
    func insertSession(_ session: BrowserSessionRecord) async throws
    func session(idHash: String) async throws -> BrowserSessionRecord?
    func deleteSession(idHash: String) async throws
    /// Ends every browser session of a user; returns how many there were.
    func deleteSessions(userID: String) async throws -> Int
}

/// Values that may be seen once only, such as client-assertion `jti`s.
public protocol ReplayStore: Sendable {
    /// Records `key` until `expiresAt`; `true` for the first caller, `false` for every later one.
    func recordOnce(key: String, expiresAt: Date, now: Date) async throws -> Bool
}

/// Counters of failed sign-ins, and the slots of the password checks in progress.
public protocol ThrottleStore: Sendable {
    func throttle(key: String) async throws -> ThrottleRecord?
    /// Adds one failure atomically, starting afresh when the last one is older than `resetBefore`.
    func recordFailure(key: String, at: Date, resetBefore: Date) async throws -> ThrottleRecord
    /// Removes the record only if no failure was counted since `seen` was read from it (at most
    /// `seen.failures`, the last no later than `seen.lastFailureAt`), in one atomic step.
    func resetThrottle(key: String, unchangedSince seen: ThrottleRecord) async throws
    /// Takes `slot` until `expiresAt`, then looks: how many slots under its key are live at `now`
    /// (its own included) and the failures counted under `failuresKey`. Taken before the look, so
    /// a check that records its failure and then releases its slot is always seen in one or the
    /// other. A slot nobody releases (its process died) stops counting at its own `expiresAt`,
    /// whatever other slots are taken meanwhile.
    func takeSlot(_ slot: ThrottleSlot, expiresAt: Date, now: Date, failuresKey: String) async throws -> ThrottleSlotView
    /// Releases `slots` (unknown ones are ignored), in one write.
    func releaseSlots(_ slots: [ThrottleSlot]) async throws
}

/// Pushed authorization requests (RFC 9126).
public protocol PushedRequestStore: Sendable {
    func insertPushedRequest(_ request: PushedRequestRecord) async throws
    /// The request, left in place: what `/authorize` checks before it spends one.
    func pushedRequest(uriHash: String) async throws -> PushedRequestRecord?
    /// Removes and returns the request; exactly one concurrent caller gets it.
    func consumePushedRequest(uriHash: String) async throws -> PushedRequestRecord?
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

/// The audit trail.
public protocol AuditStore: Sendable {
    func appendAuditEvent(_ event: AuditEventRecord) async throws
    /// A user's events, newest first, at most `limit`.
    func auditEvents(userID: String, limit: Int) async throws -> [AuditEventRecord]
    /// The events `query` selects, newest first.
    func auditEvents(_ query: AuditQuery) async throws -> [AuditEventRecord]
    /// Removes the events older than `cutoff` (the retention setting); how many went.
    func purgeAuditEvents(before cutoff: Date) async throws -> Int
}

/// Budgets with a sliding window (per-account SMS sends and wrong codes).
public protocol LimitStore: Sendable {
    func limit(key: String) async throws -> LimitRecord?
    /// Writes `record` if the stored one is still at `expectedVersion` (`nil`: none is stored yet);
    /// `false` when another change came first.
    func replaceLimit(_ record: LimitRecord, expectedVersion: Int?) async throws -> Bool
}

/// Removal of what has expired.
public protocol ExpiryStore: Sendable {
    func purgeExpired(before: Date) async throws
}

/// Whether the store can serve (`/health/ready`).
public protocol ReadinessStore: Sendable {
    /// `nil` when the store answers a query and its schema is at the version this build expects;
    /// otherwise why not, in words fit for an operator (no data). Does not throw: a failure is a reason.
    func unreadiness() async -> String?
}

/// When writes reach the disk.
public protocol WriteDurabilityStore: Sendable {
    /// Runs `body`, the answering of one request. Its writes may be reported done once committed.
    /// If one of them binds (``WriteBinding``), all of them, and every commit made before the end,
    /// are on disk before this returns or throws, so no answer tells of a binding write that a
    /// crash could still undo, and the writes of one request (and of its neighbours) share one
    /// flush. An answer that made no binding write does not wait.
    func durableWrites<T>(_ body: () async throws -> T) async throws -> T
}

/// Everything the provider stores.
public typealias SignetStore = ClientStore & UserStore & SigningKeyStore & GrantStore & SessionStore & ReplayStore
    & ThrottleStore & ExpiryStore & RememberTokenStore & SecretStore & LimitStore & PushedRequestStore & DeviceStore & AuditStore & AuthenticatorStore & ReadinessStore & WriteDurabilityStore
