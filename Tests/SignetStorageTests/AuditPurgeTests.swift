import Foundation
import SQLKit
import SignetServer
@testable import SignetStorage
import SignetStore
import Testing

/// The audit purge deletes in batches of ``SQLStore/purgeBatch`` rows, so no one statement holds
/// SQLite's writer for long, and still removes every old event and no new one.
@Suite("Audit purge in batches")
struct AuditPurgeTests {
    @Test("2,500 old events, more than two batches, are all purged; the newer ones stay")
    func batches() async throws {
        try await withTemporarySQLitePath("purge") { path in try await purgeInBatches(try await SQLStore.sqlite(path: path)) }
    }

    private func purgeInBatches(_ store: SQLStore) async throws {
        // 2,500 events at time 0 in one statement, then two recent ones.
        try await store.database.raw(
            """
            INSERT INTO signet_audit_events (id, at, user_id, client_id, kind, data)
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500)
            SELECT 'old-' || i, 0, 'u1', 'c1', 'token.issued', '{}' FROM n
            """
        ).run()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<2 {
            try await store.appendAuditEvent(
                AuditEventRecord(
                    id: "new-\(index)", at: now, kind: "token.issued", userID: "u1", clientID: "c1", actor: "client", target: nil, reason: nil))
        }
        #expect(SQLStore.purgeBatch < 2500)
        #expect(try await store.purgeAuditEvents(before: now.addingTimeInterval(-60)) == 2500)
        #expect(try await store.auditEvents(userID: "u1", limit: 10).map(\.id).sorted() == ["new-0", "new-1"])
        #expect(try await store.purgeAuditEvents(before: now.addingTimeInterval(-60)) == 0)
        try await store.close()
    }
}
