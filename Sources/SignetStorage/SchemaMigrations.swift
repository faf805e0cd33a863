// The schema, as numbered migrations run at start.
import SQLKit
import SignetCore

/// Creates and upgrades the schema. Each migration runs once; on PostgreSQL an advisory
/// lock keeps several starting instances from migrating at the same time.
enum SchemaMigrations {
    /// One statement of a migration, for both databases or for one of them.
    enum Statement: ExpressibleByStringLiteral {
        case both(String)
        case sqlite(String)
        case postgres(String)

        init(stringLiteral value: String) { self = .both(value) }

        /// The SQL to run on this database, if any.
        func sql(postgres: Bool) -> String? {
            switch self {
            case .both(let sql): return sql
            case .sqlite(let sql): return postgres ? nil : sql
            case .postgres(let sql): return postgres ? sql : nil
            }
        }
    }

    /// Migrations in order; never edit a published one, add the next.
    static let all: [[Statement]] = [
        [
            "CREATE TABLE signet_clients (id TEXT PRIMARY KEY, data TEXT NOT NULL)",
            "CREATE TABLE signet_users (id TEXT PRIMARY KEY, username TEXT NOT NULL UNIQUE, data TEXT NOT NULL)",
            "CREATE TABLE signet_signing_keys (kid TEXT PRIMARY KEY, created_at BIGINT NOT NULL, data TEXT NOT NULL)",
            "CREATE TABLE signet_pending_authorizations (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL, data TEXT NOT NULL)",
            "CREATE TABLE signet_grants (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL, revoked_at BIGINT, data TEXT NOT NULL)",
            "CREATE TABLE signet_codes (code_hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, expires_at BIGINT NOT NULL, redeemed_at BIGINT, data TEXT NOT NULL)",
            "CREATE TABLE signet_refresh_tokens (token_hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, client_id TEXT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT, data TEXT NOT NULL)",
            "CREATE INDEX signet_refresh_tokens_grant ON signet_refresh_tokens (grant_id)",
            "CREATE TABLE signet_sessions (id_hash TEXT PRIMARY KEY, expires_at BIGINT NOT NULL, data TEXT NOT NULL)",
            "CREATE TABLE signet_replay (key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
            "CREATE TABLE signet_throttle (key TEXT PRIMARY KEY, failures BIGINT NOT NULL, last_failure_at BIGINT NOT NULL)",
        ],
        [
            // Logins in progress gain steps (password, SMS) and versioned updates; pending rows are transient.
            "DROP TABLE signet_pending_authorizations",
            "CREATE TABLE signet_login_sessions (id TEXT PRIMARY KEY, version BIGINT NOT NULL, expires_at BIGINT NOT NULL, data TEXT NOT NULL)",
            "CREATE TABLE signet_remember_tokens (token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, expires_at BIGINT NOT NULL, data TEXT NOT NULL)",
            "CREATE INDEX signet_remember_tokens_user ON signet_remember_tokens (user_id)",
            "CREATE TABLE signet_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ],
        [
            // Per-account budgets with a sliding window (SMS sends per hour, wrong codes per day).
            "CREATE TABLE signet_limits (key TEXT PRIMARY KEY, version BIGINT NOT NULL, expires_at BIGINT NOT NULL, data TEXT NOT NULL)",
            // Grants and browser sessions are found by user, to end them all when a password changes or a user is locked.
            "ALTER TABLE signet_grants ADD COLUMN user_id TEXT",
            .sqlite("UPDATE signet_grants SET user_id = json_extract(data, '$.userID')"),
            .postgres("UPDATE signet_grants SET user_id = (data::json)->>'userID'"),
            "CREATE INDEX signet_grants_user ON signet_grants (user_id)",
            "ALTER TABLE signet_sessions ADD COLUMN user_id TEXT",
            .sqlite("UPDATE signet_sessions SET user_id = json_extract(data, '$.userID')"),
            .postgres("UPDATE signet_sessions SET user_id = (data::json)->>'userID'"),
            "CREATE INDEX signet_sessions_user ON signet_sessions (user_id)",
            // A user's security stamp, for compare-and-swap updates (lock, new password).
            "ALTER TABLE signet_users ADD COLUMN stamp TEXT",
            .sqlite("UPDATE signet_users SET stamp = json_extract(data, '$.securityStamp')"),
            .postgres("UPDATE signet_users SET stamp = (data::json)->>'securityStamp'"),
        ],
        [
            // Pushed authorization requests (RFC 9126), used once.
            "CREATE TABLE signet_pushed_requests (uri_hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, expires_at BIGINT NOT NULL, data TEXT NOT NULL)"
        ],
        [
            // App installations' instance ids before activation (issue 8).
            "CREATE TABLE signet_device_instances (id TEXT PRIMARY KEY, client_id TEXT NOT NULL, user_id TEXT, expires_at BIGINT NOT NULL, data TEXT NOT NULL)",
            // Activated installations, by instance id; found by certificate for mutual TLS.
            "CREATE TABLE signet_devices (instance_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, thumbprint TEXT NOT NULL UNIQUE, data TEXT NOT NULL)",
            "CREATE INDEX signet_devices_user ON signet_devices (user_id)",
            // The device CAs (key and certificate, like the signing keys).
            "CREATE TABLE signet_device_cas (id TEXT PRIMARY KEY, created_at BIGINT NOT NULL, data TEXT NOT NULL)",
        ],
        [
            // A device's changing state apart from its record, so a rename cannot undo a revocation.
            "ALTER TABLE signet_devices ADD COLUMN serial TEXT",
            "ALTER TABLE signet_devices ADD COLUMN revoked_at BIGINT",
            "ALTER TABLE signet_devices ADD COLUMN revocation_reason TEXT",
            "ALTER TABLE signet_devices ADD COLUMN replaced_by TEXT",
            "ALTER TABLE signet_devices ADD COLUMN last_used_at BIGINT",
            .sqlite("UPDATE signet_devices SET serial = json_extract(data, '$.certificateSerial')"),
            .postgres("UPDATE signet_devices SET serial = (data::json)->>'certificateSerial'"),
            "CREATE UNIQUE INDEX signet_devices_serial ON signet_devices (serial)",
            // Grants tied to a device, revoked with it.
            "ALTER TABLE signet_grants ADD COLUMN device_id TEXT",
            "CREATE INDEX signet_grants_device ON signet_grants (device_id)",
            // The audit trail (device events now; the operations issue adds the rest).
            // `seq` orders events of the same millisecond as they were written.
            .sqlite(
                "CREATE TABLE signet_audit_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, at BIGINT NOT NULL, user_id TEXT, kind TEXT NOT NULL, data TEXT NOT NULL)"
            ),
            .postgres(
                "CREATE TABLE signet_audit_events (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, at BIGINT NOT NULL, user_id TEXT, kind TEXT NOT NULL, data TEXT NOT NULL)"
            ),
            "CREATE INDEX signet_audit_events_user ON signet_audit_events (user_id, at)",
        ],
        [
            // FIDO UAF authenticators on activated devices (issue 9). What changes with each use is in
            // columns, changed by single statements; a KeyID is unique per user, a slot and an AAID per device.
            """
            CREATE TABLE signet_authenticators (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, instance_id TEXT NOT NULL, aaid TEXT NOT NULL, key_id TEXT NOT NULL,
            slot BIGINT NOT NULL, sign_counter BIGINT NOT NULL, pin_key TEXT, pin_failures BIGINT NOT NULL, pin_blocked_until BIGINT,
            clone_suspected_at BIGINT, last_used_at BIGINT, data TEXT NOT NULL)
            """,
            "CREATE UNIQUE INDEX signet_authenticators_key ON signet_authenticators (user_id, key_id)",
            "CREATE UNIQUE INDEX signet_authenticators_slot ON signet_authenticators (instance_id, slot)",
            "CREATE UNIQUE INDEX signet_authenticators_aaid ON signet_authenticators (instance_id, aaid)",
        ],
        [
            // The audit trail covers logins, tokens and administration too (issue 11): read by client and by time, purged by age.
            "ALTER TABLE signet_audit_events ADD COLUMN client_id TEXT",
            "CREATE INDEX signet_audit_events_client ON signet_audit_events (client_id, at)",
            "CREATE INDEX signet_audit_events_at ON signet_audit_events (at)",
        ],
        [
            // One B-tree page less per token request on SQLite (docs/performance.md): the replay
            // keys WITHOUT ROWID, one B-tree instead of a table and its key's index. (The audit
            // table's AUTOINCREMENT costs a page too: migration 10.)
            .sqlite("CREATE TABLE signet_replay_new (key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL) WITHOUT ROWID"),
            .sqlite("INSERT INTO signet_replay_new (key, expires_at) SELECT key, expires_at FROM signet_replay"),
            .sqlite("DROP TABLE signet_replay"),
            .sqlite("ALTER TABLE signet_replay_new RENAME TO signet_replay"),
        ],
        [
            // Two B-tree pages less per audit event on SQLite, seven frames of the log becoming
            // about four and a half (docs/performance.md): no AUTOINCREMENT, whose counter row in
            // sqlite_sequence is rewritten by every insert, and no index on the event's id, which
            // nothing looks up (ids are random UUIDs). `seq` stays the row id: it still grows with
            // every insert (a new row id is one more than the largest). Rebuilding holds the first
            // start after the upgrade for about 8 s per million events (the development machine).
            .sqlite(
                "CREATE TABLE signet_audit_events_new (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, at BIGINT NOT NULL, user_id TEXT, kind TEXT NOT NULL, data TEXT NOT NULL, client_id TEXT)"
            ),
            .sqlite(
                "INSERT INTO signet_audit_events_new (seq, id, at, user_id, kind, data, client_id) SELECT seq, id, at, user_id, kind, data, client_id FROM signet_audit_events ORDER BY seq"
            ),
            .sqlite("DROP TABLE signet_audit_events"),
            .sqlite("ALTER TABLE signet_audit_events_new RENAME TO signet_audit_events"),
            .sqlite("CREATE INDEX signet_audit_events_user ON signet_audit_events (user_id, at)"),
            .sqlite("CREATE INDEX signet_audit_events_client ON signet_audit_events (client_id, at)"),
            .sqlite("CREATE INDEX signet_audit_events_at ON signet_audit_events (at)"),
        ],
        [
            // A password check's slot is a row of its own with its own expiry, so a slot left by a
            // process that died mid-check stops counting on time even while other checks keep
            // coming; the counters under `…-checking:` keys, which other checks kept alive, go.
            .sqlite(
                "CREATE TABLE signet_throttle_slots (key TEXT NOT NULL, id TEXT NOT NULL, expires_at BIGINT NOT NULL, PRIMARY KEY (key, id)) WITHOUT ROWID"
            ),
            .postgres("CREATE TABLE signet_throttle_slots (key TEXT NOT NULL, id TEXT NOT NULL, expires_at BIGINT NOT NULL, PRIMARY KEY (key, id))"),
            "CREATE INDEX signet_throttle_slots_expiry ON signet_throttle_slots (expires_at)",
            "DELETE FROM signet_throttle WHERE key LIKE 'address-checking:%' OR key LIKE 'account-checking:%'",
        ],
        [
            // Approvals in the authenticator app (issue 34): found by id hash, and a user's pending ones.
            "CREATE TABLE signet_approvals (id_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, status TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, data TEXT NOT NULL)",
            "CREATE INDEX signet_approvals_user ON signet_approvals (user_id, status, expires_at)",
            "CREATE INDEX signet_approvals_expiry ON signet_approvals (expires_at)",
        ],
    ]

    /// `lock`: the database is PostgreSQL (take the advisory lock, run its statements).
    /// `version`: migrate only that far (tests of an upgrade start from an older schema).
    /// `policy`: a store with a schema is brought up to date only with ``SQLStore/MigrationPolicy/upgrade``;
    /// ``SQLStore/MigrationPolicy/requireCurrent`` refuses one whose version is not this build's, and
    /// ``SQLStore/MigrationPolicy/asItIs`` leaves it as it is. Decided with the lock held, from the
    /// versions recorded, so a store another process is creating meanwhile is seen as it is.
    static func run(on database: any SQLDatabase, lock: Bool, through version: Int = all.count, policy: SQLStore.MigrationPolicy = .upgrade)
        async throws
    {
        do {
            // Session-level lock, released when the dedicated migration connection closes.
            if lock { try await database.raw("SELECT pg_advisory_lock(7212031)").run() }
            try await database.raw("CREATE TABLE IF NOT EXISTS signet_schema_migrations (version BIGINT PRIMARY KEY)").run()
            let applied = try await database.raw("SELECT version FROM signet_schema_migrations").all()
                .map { try $0.decode(column: "version", as: Int64.self) }
            if let current = applied.max().map(Int.init), policy != .upgrade {
                guard policy == .requireCurrent, current != all.count else { return }
                throw SignetError(
                    .invalidConfiguration,
                    current < all.count
                        ? "the store is at schema version \(current) and this build needs version \(all.count): stop the server that uses it, then start this build's `signet serve` once to upgrade it (docs/operations.md)"
                        : "the store is at schema version \(current), newer than this build's \(all.count): use the build that upgraded it")
            }
            // Each migration and its version row commit together (both databases have transactional DDL).
            for (index, statements) in all.prefix(version).enumerated() where !applied.contains(Int64(index + 1)) {
                try await database.raw("BEGIN").run()
                do {
                    for statement in statements.compactMap({ $0.sql(postgres: lock) }) { try await database.raw(SQLQueryString(statement)).run() }
                    try await database.raw("INSERT INTO signet_schema_migrations (version) VALUES (\(bind: Int64(index + 1)))").run()
                    try await database.raw("COMMIT").run()
                } catch {
                    try? await database.raw("ROLLBACK").run()
                    throw error
                }
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.storageFailure, "the database could not be migrated: \(String(reflecting: error))")
        }
    }
}
