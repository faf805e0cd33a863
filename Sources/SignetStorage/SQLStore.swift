// One SQL implementation of SignetStore for SQLite (embedded) and PostgreSQL (many instances).
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit
import SignetCore
import SignetStore

/// The provider's storage in SQL, through SQLKit, so one implementation serves both databases.
///
/// Every single-use rule is one atomic statement (`UPDATE … WHERE used IS NULL RETURNING`,
/// `DELETE … RETURNING`, `INSERT … ON CONFLICT DO NOTHING RETURNING`), so it holds under
/// concurrency and across processes sharing one PostgreSQL. Times are stored as epoch
/// milliseconds and lists as JSON text, so both dialects read the same columns.
public final class SQLStore: Sendable {
    /// The database, for statements sent without a route (migrations' checks, tests).
    let database: any SQLDatabase
    /// Where each store method sends its statements, as it knows them: reads of a few rows,
    /// reads that may go through many (on SQLite never holding the writer), and writes.
    /// On PostgreSQL all three are the connection pool.
    let lookUps: any SQLDatabase
    let listings: any SQLDatabase
    let writes: any SQLDatabase
    /// The embedded SQLite database, `nil` on PostgreSQL: what only SQLite has (flushes per
    /// answer, deferred audit events, backups), looked up once rather than cast per request.
    let sqlite: InlineSQLiteDatabase?
    private let shutdown: @Sendable () async throws -> Void
    /// Records this store decoded, by their text: decoding depends on the text alone, and a token
    /// request reads the same client on every call and the same code and grant twice.
    let memo = DecodedRecordMemo(capacity: 512, maximumTextBytes: 16 * 1024)

    init(database: any SQLDatabase, shutdown: @escaping @Sendable () async throws -> Void) {
        self.database = database
        let sqlite = database as? InlineSQLiteDatabase
        self.sqlite = sqlite
        lookUps = sqlite?.routed(.lookUp) ?? database
        listings = sqlite?.routed(.listing) ?? database
        writes = sqlite?.routed(.write) ?? database
        self.shutdown = shutdown
    }

    /// When SQLite writes reach the disk. `full` (the default): nothing is reported done before it
    /// is on disk — the writes made while answering one request share one flush of the log, made
    /// before the answer (``WriteDurabilityStore``), and other writes wait for their own. `normal`:
    /// answers do not wait, and each commit is flushed about 0.2 s after it is made (and at close);
    /// an application crash loses nothing, but a power loss or OS crash may undo that moment's
    /// commits — a lock, a revocation, a spent code or `jti`, a counted failure — though never
    /// corrupt the file. docs/operations.md weighs the choice.
    public enum Synchronous: String, Sendable, CaseIterable {
        case normal, full
    }

    /// What opening a store does about its schema.
    public enum MigrationPolicy: Sendable {
        /// Brings the schema up to this build's version (`signet serve`, `signet restore`).
        case upgrade
        /// Creates the schema of a new store, and refuses one whose schema version is not this
        /// build's: an older one only `signet serve` upgrades (a command run against a store that
        /// an older server still uses must not migrate it under that server), and a newer one is
        /// not this build's to write (the administrative commands).
        case requireCurrent
        /// Creates the schema of a new store and leaves any other as it is (`signet backup`, which
        /// copies a store of any version).
        case asItIs
    }

    /// Opens (creating if needed) an SQLite file in WAL mode, and creates or migrates its schema
    /// as `migrations` says.
    public static func sqlite(
        path: String, synchronous: Synchronous = .full, migrations: MigrationPolicy = .upgrade, logger: Logger = Logger(label: "signet.storage")
    ) async throws -> SQLStore {
        try await sqlite(path: path, synchronous: synchronous, laterFlush: InlineSQLiteDatabase.laterFlush, migrations: migrations, logger: logger)
    }

    /// ``sqlite(path:synchronous:migrations:logger:)`` with the delay of `normal`'s timed flush
    /// (``InlineSQLiteDatabase/laterFlush``), which tests shorten or lengthen.
    ///
    /// - Parameter locking: `false` only for the copy a restore checks before it puts it in the
    ///   place whose lock the restore holds (``StoreLock``).
    static func sqlite(
        path: String, synchronous: Synchronous, laterFlush: Duration, migrations: MigrationPolicy = .upgrade, locking: Bool = true,
        logger: Logger = Logger(label: "signet.storage")
    ) async throws -> SQLStore {
        let lock = locking ? try StoreLock(forStoreAt: path, .shared) : nil
        let database: InlineSQLiteDatabase
        do {
            let tightened = try StoreFilePermissions.makeOwnerOnly(path)
            if !tightened.isEmpty {
                logger.warning(
                    "the store's files were readable by others; made owner-only",
                    metadata: ["event": "store.made_owner_only", "files": .string(tightened.joined(separator: ", "))])
            }
            database = try InlineSQLiteDatabase(path: path, waitsForDisk: synchronous == .full, laterFlush: laterFlush, logger: logger)
        } catch {
            lock?.release()
            if let error = error as? SignetError { throw error }
            throw SignetError(.storageFailure, "cannot open the SQLite store at \(path): \(error)")
        }
        do {
            try await SchemaMigrations.run(on: database.migrationSession, lock: false, policy: migrations)
        } catch {
            // A file that is no database (or a failed migration): close before giving up.
            database.close()
            lock?.release()
            throw error
        }
        return SQLStore(database: database) {
            await database.closeAfterWaitingWrites()
            lock?.release()
        }
    }

    /// Connects to PostgreSQL (`postgres://user:password@host:port/database`) with a connection
    /// pool, and creates or migrates the schema as `migrations` says.
    ///
    /// - Parameter schema: a schema to keep Signet's tables in (created if missing), so one
    ///   database can hold several deployments; default the database's search path.
    public static func postgres(
        url: String, schema: String? = nil, maxConnections: Int = 8, migrations: MigrationPolicy = .upgrade,
        logger: Logger = Logger(label: "signet.storage")
    ) async throws -> SQLStore {
        var configuration: SQLPostgresConfiguration
        do { configuration = try SQLPostgresConfiguration(url: url) } catch {
            throw SignetError(.invalidConfiguration, "the database URL is not a valid postgres:// URL")
        }
        if let schema {
            guard !schema.isEmpty, schema.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                throw SignetError(.invalidConfiguration, "a schema name is letters, digits and underscores")
            }
            configuration.searchPath = [schema]
        }
        let group = MultiThreadedEventLoopGroup.singleton
        // Migrate on one dedicated connection, so the advisory lock and the DDL share a session.
        let migrationConnection: PostgresConnection
        do {
            migrationConnection = try await PostgresConnection.connect(
                on: group.any(), configuration: configuration.coreConfiguration, id: 0, logger: logger)
        } catch {
            throw SignetError(.storageFailure, "cannot connect to PostgreSQL: \(String(reflecting: error))")
        }
        do {
            if let schema {
                try await migrationConnection.sql(queryLogLevel: nil).raw("CREATE SCHEMA IF NOT EXISTS \(unsafeRaw: schema)").run()
                try await migrationConnection.sql(queryLogLevel: nil).raw("SET search_path TO \(unsafeRaw: schema)").run()
            }
            try await SchemaMigrations.run(on: migrationConnection.sql(queryLogLevel: nil), lock: true, policy: migrations)
            try await migrationConnection.close()
        } catch {
            try? await migrationConnection.close()
            throw error
        }
        let pool = EventLoopGroupConnectionPool(
            source: PostgresConnectionSource(sqlConfiguration: configuration),
            maxConnectionsPerEventLoop: max(1, maxConnections / max(1, System.coreCount)), logger: logger, on: group)
        let database = GuardedPostgres(base: pool.database(logger: logger).sql(queryLogLevel: nil))
        let owner = PoolOwner(pool: pool)
        return SQLStore(database: database) { try await owner.pool.shutdownAsync() }
    }

    /// Opens the store a `--database` value names: a `postgres://` URL, or an SQLite file path.
    public static func open(
        _ location: String, synchronous: Synchronous = .full, migrations: MigrationPolicy = .upgrade, logger: Logger = Logger(label: "signet.storage")
    ) async throws -> SQLStore {
        if let problem = locationProblem(location) { throw SignetError(.invalidConfiguration, "the database is \(problem)") }
        guard let path = sqlitePath(of: location) else {
            return try await postgres(url: lowercasingScheme(location), migrations: migrations, logger: logger)
        }
        return try await sqlite(path: path, synchronous: synchronous, migrations: migrations, logger: logger)
    }

    /// Closes the connections.
    public func close() async throws { try await shutdown() }
}

extension SQLStore: WriteDurabilityStore {
    public func durableWrites<T>(_ body: () async throws -> T) async throws -> T {
        guard let sqlite else { return try await body() }
        return try await sqlite.durableWrites(body)
    }
}

extension SQLStore: ReadinessStore {
    public func unreadiness() async -> String? {
        if let failure = sqlite?.flushFailure { return failure }
        do {
            let row = try await lookUps.raw("SELECT MAX(version) AS version FROM signet_schema_migrations").first()
            let version = try row?.decode(column: "version", as: Int64?.self) ?? 0
            guard version == Int64(SchemaMigrations.all.count) else {
                return "the schema is at version \(version); this build needs \(SchemaMigrations.all.count)"
            }
            return nil
        } catch  where GuardedPostgres.isOutage(error) || (error as? SignetError)?.code == .storageUnavailable {
            return "the database cannot be reached"
        } catch {
            return "the database does not answer"
        }
    }

    // MARK: Encoding helpers

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }

    /// The store's JSON settings (``SignetStore/StoredJSON``).
    static var encoder: JSONEncoder { StoredJSON.encoder }
    static var decoder: JSONDecoder { StoredJSON.decoder }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The same for the records a token request stores, written without `Codable` (``JSONObjectWritable``).
    static func json(_ value: some JSONObjectWritable) throws -> String {
        String(decoding: value.jsonBytes(), as: UTF8.self)
    }

    /// The types whose decoded records this store remembers by their text (``memo``): the records
    /// a token request reads (more than once, or on every request); not signing keys, pushed
    /// requests or anything else.
    private static let memoized: Set<ObjectIdentifier> = [
        ObjectIdentifier(ClientRecord.self), ObjectIdentifier(GrantRecord.self), ObjectIdentifier(AuthorizationCodeRecord.self),
        ObjectIdentifier(RefreshTokenRecord.self), ObjectIdentifier(UserRecord.self),
    ]

    /// A stored record's JSON text decoded (without `Codable` when the type reads itself and the
    /// text is plain, ``JSONObjectReadable``).
    static func decode<T: Decodable & Sendable>(_ type: T.Type, _ text: String) throws -> T {
        do {
            // The records a token request reads are read without `Codable` when their JSON is plain.
            if let readable = T.self as? any JSONObjectReadable.Type { return try Self.read(readable, text) as! T }
            return try decoder.decode(T.self, from: Data(text.utf8))
        } catch {
            throw SignetError(.storageFailure, "a stored \(T.self) could not be read")
        }
    }

    /// ``decode(_:_:)``, remembered by text for the types a token request reads (``memo``).
    func decoded<T: Decodable & Sendable>(_ type: T.Type, _ text: String) throws -> T {
        guard Self.memoized.contains(ObjectIdentifier(T.self)) else { return try Self.decode(T.self, text) }
        return try memo.record(T.self, from: text) { try Self.decode(T.self, $0) }
    }

    private static func read<R: JSONObjectReadable>(_ type: R.Type, _ text: String) throws -> R {
        try R.decode(text.utf8, fallback: decoder)
    }

    /// The JSON `data` column of a row, decoded.
    func record<T: Decodable & Sendable>(_ type: T.Type, from row: (any SQLRow)?) throws -> T? {
        guard let row else { return nil }
        return try decoded(T.self, try row.decode(column: "data", as: String.self))
    }
}

/// Holds the connection pool for shutdown. AsyncKit's pool synchronises itself internally
/// (it hands connections out per event loop) but predates `Sendable`, hence the unchecked box.
private final class PoolOwner: @unchecked Sendable {
    let pool: EventLoopGroupConnectionPool<PostgresConnectionSource>
    init(pool: EventLoopGroupConnectionPool<PostgresConnectionSource>) { self.pool = pool }
}
