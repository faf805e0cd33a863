// What PostgreSQL does differently from SQLite, made to look alike to the store: text holding
// the NUL character, and a database that cannot be reached for a while (a restart).
// Written by hand: SQLKit and PostgresNIO have neither (PostgreSQL answers NUL with an error, and
// an outage surfaces as whichever connection or pool error met it first).
import AsyncKit
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SignetCore

/// Forwards every statement to `base`, with two differences.
///
/// - A statement one of whose bound strings holds U+0000 is not sent and answers no rows: on
///   SQLite, which can hold NUL, no stored value holds it either, so the same statement finds
///   nothing on both. The HTTP edge refuses NUL first (a 400 with the endpoint's error); this
///   keeps a value that reaches the store another way (a claim in a signed token) from turning
///   into a server error.
/// - An error that means the database cannot be reached now (a connection refused, closed or
///   reset; PostgreSQL shutting down or starting up; no pooled connection in time) becomes
///   `SignetError(.storageUnavailable)`, which the HTTP layer answers with 503 and `Retry-After`.
struct GuardedPostgres: SQLDatabase {
    let base: any SQLDatabase

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        guard !Self.bindsNUL(query, on: base) else { return eventLoop.makeSucceededVoidFuture() }
        return base.execute(sql: query, onRow).flatMapErrorThrowing { throw Self.translated($0) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        guard !Self.bindsNUL(query, on: base) else { return }
        do { try await base.execute(sql: query, onRow) } catch { throw Self.translated(error) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await base.withSession { try await closure(GuardedPostgres(base: $0)) }
    }

    /// Whether a string bound in `query` holds U+0000.
    static func bindsNUL(_ query: any SQLExpression, on database: any SQLDatabase) -> Bool {
        database.serialize(query).binds.contains { bind in
            if let text = bind as? String { return text.utf8.contains(0) }
            if let text = bind as? String? { return text?.utf8.contains(0) ?? false }
            return false
        }
    }

    /// `error`, or `SignetError(.storageUnavailable)` when it says the database cannot be reached now.
    static func translated(_ error: any Error) -> any Error {
        isOutage(error) ? SignetError(.storageUnavailable, "the database cannot be reached now; try again shortly") : error
    }

    /// Whether `error` says the database cannot be reached now, rather than that a statement failed.
    static func isOutage(_ error: any Error) -> Bool {
        switch error {
        case let error as PSQLError:
            switch error.code {
            case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
                return true
            case .server:
                // SQLSTATE class 08 (connection exception), 57P01 admin shutdown, 57P02 crash
                // shutdown, 57P03 cannot connect now (starting up).
                guard let state = error.serverInfo?[.sqlState] else { return false }
                return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
            default:
                return false
            }
        case is ConnectionPoolTimeoutError, is NIOConnectionError, is ChannelError:
            return true
        case let error as IOError:
            return [ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode)
        default:
            return false
        }
    }
}
