import Foundation
import SQLKit
import SignetServer
@testable import SignetStorage
import Testing

/// Statements stay prepared across calls. SQLite plans some statements by the value bound to them
/// (a bare parameter compared in a join, or in an index scan ordered by another column); once such
/// a statement has been prepared again (after any schema change, such as the migrations at start),
/// SQLite prepares it again at every new value. The store casts those parameters.
@Suite("SQLite: cached statements are not prepared again at every call")
struct SQLitePreparedStatementTests {
    @Test("after a schema change, look-ups by a new key each time are prepared again once, not at every call")
    func notPreparedAgainPerCall() async throws {
        try await withTemporarySQLiteStore("reprepare") { store, database, _ in
            func lookUps(_ round: Int) async throws {
                _ = try await store.codeWithGrant(hash: "code-\(round)")
                _ = try await store.refreshTokenWithGrant(hash: "token-\(round)")
                _ = try await store.authenticators(instanceID: "instance-\(round)")
                _ = try await store.redeemCodeWithGrant(hash: "code-\(round)", at: Date())
                _ = try await store.useRefreshTokenWithGrant(hash: "token-\(round)", at: Date())
            }
            try await lookUps(0)
            try await database.raw("CREATE TABLE schema_change (id INTEGER PRIMARY KEY)").run()
            let before = database.repreparations
            for round in 1...20 { try await lookUps(round) }
            // At most once per statement and connection (a writer and two readers), not once per call.
            let again = database.repreparations - before
            #expect(again <= 7 * 3, "prepared again \(again) times in 100 calls")
        }
    }

    @Test("after a schema change, audit listings by a new user, client, time and limit each time are prepared again once, not at every call")
    func auditListingsNotPreparedAgainPerCall() async throws {
        try await withTemporarySQLiteStore("reprepare-audit") { store, database, _ in
            func listings(_ round: Int) async throws {
                let since = Date(timeIntervalSince1970: 1_800_000_000 + Double(round))
                _ = try await store.auditEvents(userID: "user-\(round)", limit: round)
                _ = try await store.auditEvents(AuditQuery(userID: "user-\(round)", limit: round))
                _ = try await store.auditEvents(AuditQuery(clientID: "client-\(round)", since: since, limit: round))
                _ = try await store.auditEvents(AuditQuery(since: since, limit: round))
            }
            try await listings(1)
            try await database.raw("CREATE TABLE schema_change (id INTEGER PRIMARY KEY)").run()
            let before = database.repreparations
            for round in 2...21 { try await listings(round) }
            let again = database.repreparations - before
            #expect(again <= 4 * 3, "prepared again \(again) times in 80 calls")
        }
    }
}
