// PostgreSQL text cannot hold the NUL character; SQLite's can. The same statement must mean the
// same on both, so a statement that binds such text to PostgreSQL finds nothing and changes
// nothing, as it would on SQLite where no stored value holds NUL either.
// Written by hand: SQLKit and PostgresNIO have no such guard (PostgreSQL answers with an error).
import Logging
import NIOCore
import SQLKit

/// Forwards every statement to `base` unless one of its bound strings holds U+0000; such a
/// statement is not sent and answers no rows.
///
/// The HTTP edge refuses NUL in every parameter, body and path first (a 400 with the endpoint's
/// error); this keeps a value that reaches the store another way (a claim inside a signed token,
/// a future endpoint) from turning into a server error.
struct PostgresTextGuard: SQLDatabase {
    let base: any SQLDatabase

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        guard Self.bindsNUL(query, on: base) else { return base.execute(sql: query, onRow) }
        return eventLoop.makeSucceededVoidFuture()
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        guard Self.bindsNUL(query, on: base) else { return try await base.execute(sql: query, onRow) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await base.withSession { try await closure(PostgresTextGuard(base: $0)) }
    }

    /// Whether a string bound in `query` holds U+0000.
    static func bindsNUL(_ query: any SQLExpression, on database: any SQLDatabase) -> Bool {
        database.serialize(query).binds.contains { bind in
            if let text = bind as? String { return text.utf8.contains(0) }
            if let text = bind as? String? { return text?.utf8.contains(0) ?? false }
            return false
        }
    }
}
