// Approvals in SQL: inserted under the user's pending limit, decided by one conditional UPDATE.
import Foundation
import SQLKit
import SignetStore

extension SQLStore: ApprovalStore {
    public func insertApproval(_ approval: ApprovalRecord, pendingLimit: Int, now: Date) async throws -> Bool {
        // Inserted only while the user is under the limit: exact where writes are serialised
        // (SQLite's one writer).
        let inserted = try await writes.raw(
            """
            INSERT INTO signet_approvals (id_hash, user_id, status, created_at, expires_at, data)
            SELECT \(bind: approval.idHash), \(bind: approval.userID), \(bind: approval.status.rawValue), \(bind: Self.millis(approval.createdAt)),
                \(bind: Self.millis(approval.expiresAt)), \(bind: try Self.json(approval))
            WHERE (SELECT count(*) FROM signet_approvals
                WHERE user_id = \(bind: approval.userID) AND status = 'pending' AND expires_at > \(bind: Self.millis(now))) < \(bind: pendingLimit)
            ON CONFLICT (id_hash) DO NOTHING RETURNING id_hash
            """
        ).first()
        guard inserted != nil else { return false }
        // Then count, this one included (a look-up: it runs where this request's write is seen):
        // PostgreSQL's statements may each have counted before the other's insert committed, so
        // one over the limit is taken back; of two such racing inserts each sees the other once
        // committed, so the limit is never exceeded (at worst both go).
        let pending =
            try await lookUps.raw(
                """
                SELECT count(*) AS pending FROM signet_approvals
                WHERE user_id = \(bind: approval.userID) AND status = 'pending' AND expires_at > \(bind: Self.millis(now))
                """
            ).first()?.decode(column: "pending", as: Int64.self) ?? 0
        guard pending > Int64(pendingLimit) else { return true }
        try await writes.raw("DELETE FROM signet_approvals WHERE id_hash = \(bind: approval.idHash)").run()
        return false
    }

    public func approval(idHash: String) async throws -> ApprovalRecord? {
        try record(ApprovalRecord.self, from: try await lookUps.raw("SELECT data FROM signet_approvals WHERE id_hash = \(bind: idHash)").first())
    }

    public func pendingApprovals(userID: String, now: Date) async throws -> [ApprovalRecord] {
        try await listings.raw(
            """
            SELECT data FROM signet_approvals
            WHERE user_id = \(bind: userID) AND status = 'pending' AND expires_at > \(bind: Self.millis(now))
            ORDER BY created_at DESC, id_hash DESC
            """
        ).all().compactMap { try record(ApprovalRecord.self, from: $0) }
    }

    public func decideApproval(_ approval: ApprovalRecord, now: Date) async throws -> Bool {
        try await writes.raw(
            """
            UPDATE signet_approvals SET status = \(bind: approval.status.rawValue), data = \(bind: try Self.json(approval))
            WHERE id_hash = \(bind: approval.idHash) AND status = 'pending' AND expires_at > \(bind: Self.millis(now))
            RETURNING id_hash
            """
        ).first() != nil
    }
}
