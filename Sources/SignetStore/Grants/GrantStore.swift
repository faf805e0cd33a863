// Where grants, codes, refresh tokens and logins in progress are kept, spent once each.
import Foundation

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
