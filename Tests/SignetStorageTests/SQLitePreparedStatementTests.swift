import Foundation
import SQLKit
import SignetServer
@testable import SignetStorage
import SignetStore
import Testing

/// Statements stay prepared across calls. SQLite plans some statements by the value bound to them
/// (a bare parameter compared in a join, or in an index scan ordered by another column); once such
/// a statement has been prepared again (after any schema change, such as the migrations at start),
/// SQLite prepares it again at every new value. The store casts those parameters.
@Suite("SQLite: cached statements are not prepared again at every call")
struct SQLitePreparedStatementTests {
    /// How many times the statements `round` runs are prepared again over twenty rounds with new
    /// values, after a schema change made once a first round has prepared them.
    private func preparationsAgain(_ label: String, _ round: @escaping (SQLStore, Int) async throws -> Void) async throws -> Int {
        var again = 0
        try await withTemporarySQLiteStore(label) { store, database, _ in
            try await round(store, 0)
            try await database.raw("CREATE TABLE schema_change (id INTEGER PRIMARY KEY)").run()
            let before = database.repreparations
            for index in 1...20 { try await round(store, index) }
            again = database.repreparations - before
        }
        return again
    }

    @Test("after a schema change, look-ups and spends by a new key each time are prepared again once, not at every call")
    func notPreparedAgainPerCall() async throws {
        let again = try await preparationsAgain("reprepare") { store, round in
            _ = try await store.codeWithGrant(hash: "code-\(round)")
            _ = try await store.refreshTokenWithGrant(hash: "token-\(round)")
            _ = try await store.authenticators(instanceID: "instance-\(round)")
            _ = try await store.redeemCodeWithGrant(hash: "code-\(round)", at: Date())
            _ = try await store.useRefreshTokenWithGrant(hash: "token-\(round)", at: Date())
        }
        // At most once per statement and connection: five reads (the three look-ups, and each
        // unknown spend's look-up of its grant id) on a writer and two readers, two writes on the
        // writer. With bare parameters, the joins and the listing were prepared at nearly every call.
        #expect(again <= 5 * 3 + 2, "prepared again \(again) times in 100 calls")
    }

    @Test("after a schema change, audit listings by a new user, client, time and limit each time are prepared again once, not at every call")
    func auditListingsNotPreparedAgainPerCall() async throws {
        let again = try await preparationsAgain("reprepare-audit") { store, round in
            let since = Date(timeIntervalSince1970: 1_800_000_000 + Double(round))
            _ = try await store.auditEvents(userID: "user-\(round)", limit: round + 1)
            _ = try await store.auditEvents(AuditQuery(clientID: "client-\(round)", since: since, limit: round + 1))
            _ = try await store.auditEvents(AuditQuery(since: since, limit: round + 1))
        }
        // Three statements; listings run on the two readers only. With bare parameters: nearly every call.
        #expect(again <= 3 * 2, "prepared again \(again) times in 60 calls")
    }

    @Test(
        "after a schema change, a password check's throttle slots (taken, looked at, released) by new keys each time are prepared again once, not at every call"
    )
    func throttleSlotsNotPreparedAgainPerCall() async throws {
        let again = try await preparationsAgain("reprepare-throttle") { store, round in
            let now = Date(timeIntervalSince1970: 1_800_000_000 + Double(round))
            let slot = ThrottleSlot(key: "account-checking:\(round)", id: "slot-\(round)")
            _ = try await store.takeSlot(slot, expiresAt: now.addingTimeInterval(60), now: now, failuresKey: "account:\(round)")
            try await store.releaseSlots([slot, ThrottleSlot(key: "address-checking:\(round)", id: "other-\(round)")])
        }
        // Three statements: the insert and the release on the writer, the look on the writer or a reader.
        #expect(again <= 2 + 3, "prepared again \(again) times in 60 calls")
    }
}
