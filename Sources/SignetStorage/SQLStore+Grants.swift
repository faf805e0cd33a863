// Pending authorizations, grants, codes and refresh tokens in SQL: the single-use rules.
import Foundation
import SQLKit
import SignetCore
import SignetStore

extension SQLStore: GrantStore {
    public func insertLoginSession(_ session: LoginSessionRecord) async throws {
        // Not binding (WriteBinding): a login just begun.
        try await WriteBinding.notBinding {
            try await writes.raw(
                "INSERT INTO signet_login_sessions (id, version, expires_at, data) VALUES (\(bind: session.id), \(bind: Int64(session.version)), \(bind: Self.millis(session.expiresAt)), \(bind: try Self.json(session)))"
            ).run()
        }
    }

    public func loginSession(id: String) async throws -> LoginSessionRecord? {
        try record(LoginSessionRecord.self, from: try await lookUps.raw("SELECT data FROM signet_login_sessions WHERE id = \(bind: id)").first())
    }

    public func replaceLoginSession(_ session: LoginSessionRecord, expectedVersion: Int) async throws -> Bool {
        // Not binding (WriteBinding): a login's step; the checks it records bind elsewhere.
        return try await WriteBinding.notBinding {
            try await writes.raw(
                "UPDATE signet_login_sessions SET version = \(bind: Int64(session.version)), expires_at = \(bind: Self.millis(session.expiresAt)), data = \(bind: try Self.json(session)) WHERE id = \(bind: session.id) AND version = \(bind: Int64(expectedVersion)) RETURNING id"
            ).first() != nil
        }
    }

    public func consumeLoginSession(id: String) async throws -> LoginSessionRecord? {
        // Not binding (WriteBinding): a login ended. Lost, it is lost with what its end made (a
        // code); the checks that end a login early (failures, locks) bind on their own.
        return try await WriteBinding.notBinding {
            try record(
                LoginSessionRecord.self, from: try await writes.raw("DELETE FROM signet_login_sessions WHERE id = \(bind: id) RETURNING data").first()
            )
        }
    }

    public func insertGrant(_ grant: GrantRecord) async throws {
        // Not binding (WriteBinding): a new grant, usable only through a code or token that binds.
        try await WriteBinding.notBinding {
            try await writes.raw(
                "INSERT INTO signet_grants (id, user_id, device_id, expires_at, revoked_at, data) VALUES (\(bind: grant.id), \(bind: grant.userID), \(bind: grant.deviceID), \(bind: Self.millis(grant.expiresAt)), \(bind: grant.revokedAt.map(Self.millis)), \(bind: try Self.json(grant)))"
            ).run()
        }
    }

    public func grant(id: String) async throws -> GrantRecord? {
        try Self.grant(
            from: try await lookUps.raw("SELECT data AS grant_data, revoked_at, device_id FROM signet_grants WHERE id = \(bind: id)").first())
    }

    /// A grant from the columns `grant_data`, `revoked_at` and `device_id` (the columns a grant's
    /// own statements change, beside its JSON); `nil` without a row or a grant in it.
    private static func grant(from row: (any SQLRow)?) throws -> GrantRecord? {
        guard let row, let text = try row.decode(column: "grant_data", as: String?.self) else { return nil }
        var grant = try decode(GrantRecord.self, text)
        grant.revokedAt = try row.decode(column: "revoked_at", as: Int64?.self).map(Self.date)
        grant.deviceID = try row.decode(column: "device_id", as: String?.self)
        return grant
    }

    @discardableResult
    public func revokeGrant(id: String, at date: Date) async throws -> Bool {
        let now = Self.millis(date)
        let revoked = try await writes.raw(
            "UPDATE signet_grants SET revoked_at = \(bind: now) WHERE id = \(bind: id) AND revoked_at IS NULL RETURNING id"
        ).first()
        try await writes.raw("UPDATE signet_refresh_tokens SET used_at = \(bind: now) WHERE grant_id = \(bind: id) AND used_at IS NULL").run()
        return revoked != nil
    }

    public func revokeGrants(userID: String, at date: Date) async throws -> Int {
        let now = Self.millis(date)
        let revoked = try await writes.raw(
            "UPDATE signet_grants SET revoked_at = \(bind: now) WHERE user_id = \(bind: userID) AND revoked_at IS NULL RETURNING id"
        ).all()
        try await writes.raw(
            "UPDATE signet_refresh_tokens SET used_at = \(bind: now) WHERE used_at IS NULL AND grant_id IN (SELECT id FROM signet_grants WHERE user_id = \(bind: userID))"
        ).run()
        return revoked.count
    }

    public func insertCode(_ code: AuthorizationCodeRecord) async throws {
        // Not binding (WriteBinding): a new code; its redemption binds.
        try await WriteBinding.notBinding {
            try await writes.raw(
                "INSERT INTO signet_codes (code_hash, grant_id, expires_at, redeemed_at, data) VALUES (\(bind: code.codeHash), \(bind: code.grantID), \(bind: Self.millis(code.expiresAt)), NULL, \(bind: try Self.json(code)))"
            ).run()
        }
    }

    public func code(hash: String) async throws -> AuthorizationCodeRecord? {
        guard let row = try await lookUps.raw("SELECT data, redeemed_at FROM signet_codes WHERE code_hash = \(bind: hash)").first(),
            var code = try record(AuthorizationCodeRecord.self, from: row)
        else { return nil }
        code.redeemedAt = try row.decode(column: "redeemed_at", as: Int64?.self).map(Self.date)
        return code
    }

    public func codeWithGrant(hash: String) async throws -> (code: AuthorizationCodeRecord, grant: GrantRecord?)? {
        guard let read = try await withGrant(AuthorizationCodeRecord.self, Self.selectCodeWithGrant, key: hash) else { return nil }
        var code = read.record
        code.redeemedAt = read.usedAt
        return (code, read.grant)
    }

    public func redeemCodeWithGrant(hash: String, at date: Date) async throws -> Spend<AuthorizationCodeRecord> {
        try await redeemOnce(
            table: "signet_codes", key: ("code_hash", hash), usedColumn: "redeemed_at", usedAt: \.redeemedAt, at: date,
            returning: Self.returningCodeWithGrant)
    }

    public func insertRefreshToken(_ token: RefreshTokenRecord) async throws {
        try await writes.raw(
            "INSERT INTO signet_refresh_tokens (token_hash, grant_id, client_id, expires_at, used_at, data) VALUES (\(bind: token.tokenHash), \(bind: token.grantID), \(bind: token.clientID), \(bind: Self.millis(token.expiresAt)), NULL, \(bind: try Self.json(token)))"
        ).run()
    }

    public func refreshToken(hash: String) async throws -> RefreshTokenRecord? {
        guard let row = try await lookUps.raw("SELECT data, used_at FROM signet_refresh_tokens WHERE token_hash = \(bind: hash)").first(),
            var token = try record(RefreshTokenRecord.self, from: row)
        else { return nil }
        token.usedAt = try row.decode(column: "used_at", as: Int64?.self).map(Self.date)
        return token
    }

    public func refreshTokenWithGrant(hash: String) async throws -> (token: RefreshTokenRecord, grant: GrantRecord?)? {
        guard let read = try await withGrant(RefreshTokenRecord.self, Self.selectRefreshTokenWithGrant, key: hash) else { return nil }
        var token = read.record
        token.usedAt = read.usedAt
        return (token, read.grant)
    }

    public func useRefreshTokenWithGrant(hash: String, at date: Date) async throws -> Spend<RefreshTokenRecord> {
        try await redeemOnce(
            table: "signet_refresh_tokens", key: ("token_hash", hash), usedColumn: "used_at", usedAt: \.usedAt, at: date,
            returning: Self.returningRefreshTokenWithGrant)
    }

    /// A single-use row (a code or a refresh token), when it was used, and, while it is unused,
    /// its grant (`nil` when there is none), in one statement instead of two: the token endpoint
    /// checks both before spending the row.
    ///
    /// The key is compared as `CAST(? AS TEXT)`, not as a bare parameter: in a join SQLite plans by
    /// the value bound (constant propagation), and once such a statement has been prepared again
    /// (after any schema change, such as the migrations at start) it is prepared again at every new
    /// value, about 75,000 instructions a time (found with callgrind).
    private func withGrant<Record: Decodable & Sendable>(
        _ type: Record.Type, _ select: String, key: String
    ) async throws -> (record: Record, usedAt: Date?, grant: GrantRecord?)? {
        guard let row = try await lookUps.raw("\(unsafeRaw: select) = CAST(\(bind: key) AS TEXT)").first(),
            let record = try record(Record.self, from: row)
        else { return nil }
        let usedAt = try row.decode(column: "used_at", as: Int64?.self).map(Self.date)
        // A spent row's grant is not decoded: it is not needed, and a grant that could not be read
        // must not stop a replay from being answered as one (and its grant revoked).
        return (record, usedAt, usedAt == nil ? try Self.grant(from: row) : nil)
    }

    /// ``withGrant(_:_:key:)``'s statement for a table, up to the key's comparison (made once).
    private static func selectWithGrant(table: String, keyColumn: String, usedColumn: String) -> String {
        """
        SELECT r.data AS data, r.\(usedColumn) AS used_at, g.data AS grant_data, g.revoked_at AS revoked_at, g.device_id AS device_id \
        FROM \(table) r LEFT JOIN signet_grants g ON g.id = r.grant_id WHERE r.\(keyColumn)
        """
    }

    private static let selectCodeWithGrant = selectWithGrant(table: "signet_codes", keyColumn: "code_hash", usedColumn: "redeemed_at")
    private static let selectRefreshTokenWithGrant = selectWithGrant(table: "signet_refresh_tokens", keyColumn: "token_hash", usedColumn: "used_at")

    /// Marks a single-use row used (at `date`, in the row and in the record returned) in one
    /// statement, so exactly one concurrent caller wins, and returns the winner's grant and its
    /// user as they stand at the spend from the same statement (`returning`,
    /// ``returningWithGrant(table:)``); tells the others whether it was a replay (and of which
    /// grant) or never existed.
    private func redeemOnce<Record: Decodable & Sendable & Equatable>(
        table: String, key: (column: String, value: String), usedColumn: String, usedAt: WritableKeyPath<Record, Date?>, at date: Date,
        returning: String
    ) async throws -> Spend<Record> {
        let won = try await writes.raw(
            "UPDATE \(unsafeRaw: table) SET \(unsafeRaw: usedColumn) = \(bind: Self.millis(date)) WHERE \(unsafeRaw: key.column) = \(bind: key.value) AND \(unsafeRaw: usedColumn) IS NULL RETURNING \(unsafeRaw: returning)"
        ).first()
        if var record = try record(Record.self, from: won) {
            record[keyPath: usedAt] = date
            return Spend(.redeemed(record), grant: try Self.grant(from: won), user: try Self.user(from: won))
        }
        guard let row = try await lookUps.raw("SELECT grant_id FROM \(unsafeRaw: table) WHERE \(unsafeRaw: key.column) = \(bind: key.value)").first()
        else {
            return Spend(.unknown)
        }
        return Spend(.alreadyUsed(grantID: try row.decode(column: "grant_id", as: String.self)))
    }

    /// The `RETURNING` list of a spend that reads its row's grant and the grant's user too, in
    /// the columns ``grant(from:)`` and ``user(from:)`` read (made once per table): the token
    /// endpoint needs both, and reading them here saves it a statement. On PostgreSQL (read
    /// committed) the subqueries see the database as the statement began: a revocation or a lock
    /// committed while it runs is missed, as one committed just after the spend is, and the
    /// tokens then issued are born revoked (their refresh and userinfo look at the grant and the
    /// user again).
    private static func returningWithGrant(table: String) -> String {
        let grant = "FROM signet_grants g WHERE g.id = \(table).grant_id"
        return
            "data, (SELECT g.data \(grant)) AS grant_data, (SELECT g.revoked_at \(grant)) AS revoked_at, (SELECT g.device_id \(grant)) AS device_id, "
            + "(SELECT u.data FROM signet_users u WHERE u.id = (SELECT g.user_id \(grant))) AS user_data"
    }

    /// A user from the column `user_data`; `nil` without a row or a user in it.
    private static func user(from row: (any SQLRow)?) throws -> UserRecord? {
        guard let row, let text = try row.decode(column: "user_data", as: String?.self) else { return nil }
        return try decode(UserRecord.self, text)
    }

    private static let returningCodeWithGrant = returningWithGrant(table: "signet_codes")
    private static let returningRefreshTokenWithGrant = returningWithGrant(table: "signet_refresh_tokens")
}
