// Pending authorizations, grants, codes and refresh tokens in SQL: the single-use rules.
import Foundation
import SQLKit
import SignetCore
import SignetServer

extension SQLStore: GrantStore {
    public func insertPendingAuthorization(_ pending: PendingAuthorizationRecord) async throws {
        try await database.raw(
            "INSERT INTO signet_pending_authorizations (id, expires_at, data) VALUES (\(bind: pending.id), \(bind: Self.millis(pending.expiresAt)), \(bind: try Self.json(pending)))"
        ).run()
    }

    public func pendingAuthorization(id: String) async throws -> PendingAuthorizationRecord? {
        try Self.record(PendingAuthorizationRecord.self, from: try await database.raw("SELECT data FROM signet_pending_authorizations WHERE id = \(bind: id)").first())
    }

    public func consumePendingAuthorization(id: String) async throws -> PendingAuthorizationRecord? {
        try Self.record(
            PendingAuthorizationRecord.self, from: try await database.raw("DELETE FROM signet_pending_authorizations WHERE id = \(bind: id) RETURNING data").first())
    }

    public func insertGrant(_ grant: GrantRecord) async throws {
        try await database.raw(
            "INSERT INTO signet_grants (id, expires_at, revoked_at, data) VALUES (\(bind: grant.id), \(bind: Self.millis(grant.expiresAt)), \(bind: grant.revokedAt.map(Self.millis)), \(bind: try Self.json(grant)))"
        ).run()
    }

    public func grant(id: String) async throws -> GrantRecord? {
        guard let row = try await database.raw("SELECT data, revoked_at FROM signet_grants WHERE id = \(bind: id)").first(),
            var grant = try Self.record(GrantRecord.self, from: row)
        else { return nil }
        grant.revokedAt = try row.decode(column: "revoked_at", as: Int64?.self).map(Self.date)
        return grant
    }

    public func revokeGrant(id: String, at date: Date) async throws {
        let now = Self.millis(date)
        try await database.raw("UPDATE signet_grants SET revoked_at = COALESCE(revoked_at, \(bind: now)) WHERE id = \(bind: id)").run()
        try await database.raw("UPDATE signet_refresh_tokens SET used_at = \(bind: now) WHERE grant_id = \(bind: id) AND used_at IS NULL").run()
    }

    public func insertCode(_ code: AuthorizationCodeRecord) async throws {
        try await database.raw(
            "INSERT INTO signet_codes (code_hash, grant_id, expires_at, redeemed_at, data) VALUES (\(bind: code.codeHash), \(bind: code.grantID), \(bind: Self.millis(code.expiresAt)), NULL, \(bind: try Self.json(code)))"
        ).run()
    }

    public func redeemCode(hash: String, at date: Date) async throws -> Redemption<AuthorizationCodeRecord> {
        let won = try await database.raw(
            "UPDATE signet_codes SET redeemed_at = \(bind: Self.millis(date)) WHERE code_hash = \(bind: hash) AND redeemed_at IS NULL RETURNING data"
        ).first()
        if var code = try Self.record(AuthorizationCodeRecord.self, from: won) {
            code.redeemedAt = date
            return .redeemed(code)
        }
        guard let row = try await database.raw("SELECT grant_id FROM signet_codes WHERE code_hash = \(bind: hash)").first() else { return .unknown }
        return .alreadyUsed(grantID: try row.decode(column: "grant_id", as: String.self))
    }

    public func insertRefreshToken(_ token: RefreshTokenRecord) async throws {
        try await database.raw(
            "INSERT INTO signet_refresh_tokens (token_hash, grant_id, client_id, expires_at, used_at, data) VALUES (\(bind: token.tokenHash), \(bind: token.grantID), \(bind: token.clientID), \(bind: Self.millis(token.expiresAt)), NULL, \(bind: try Self.json(token)))"
        ).run()
    }

    public func refreshToken(hash: String) async throws -> RefreshTokenRecord? {
        guard let row = try await database.raw("SELECT data, used_at FROM signet_refresh_tokens WHERE token_hash = \(bind: hash)").first(),
            var token = try Self.record(RefreshTokenRecord.self, from: row)
        else { return nil }
        token.usedAt = try row.decode(column: "used_at", as: Int64?.self).map(Self.date)
        return token
    }

    public func useRefreshToken(hash: String, at date: Date) async throws -> Redemption<RefreshTokenRecord> {
        let won = try await database.raw(
            "UPDATE signet_refresh_tokens SET used_at = \(bind: Self.millis(date)) WHERE token_hash = \(bind: hash) AND used_at IS NULL RETURNING data"
        ).first()
        if var token = try Self.record(RefreshTokenRecord.self, from: won) {
            token.usedAt = date
            return .redeemed(token)
        }
        guard let row = try await database.raw("SELECT grant_id FROM signet_refresh_tokens WHERE token_hash = \(bind: hash)").first() else {
            return .unknown
        }
        return .alreadyUsed(grantID: try row.decode(column: "grant_id", as: String.self))
    }
}
