// Pushed authorization requests in SQL: inserted once, read, consumed by one DELETE … RETURNING.
import Foundation
import SQLKit
import SignetStore

extension SQLStore: PushedRequestStore {
    public func insertPushedRequest(_ request: PushedRequestRecord) async throws {
        try await writes.raw(
            """
            INSERT INTO signet_pushed_requests (uri_hash, client_id, expires_at, data)
            VALUES (\(bind: request.uriHash), \(bind: request.clientID), \(bind: Self.millis(request.expiresAt)), \(bind: try Self.json(request)))
            """
        ).run()
    }

    public func pushedRequest(uriHash: String) async throws -> PushedRequestRecord? {
        try record(
            PushedRequestRecord.self, from: try await lookUps.raw("SELECT data FROM signet_pushed_requests WHERE uri_hash = \(bind: uriHash)").first()
        )
    }

    public func consumePushedRequest(uriHash: String) async throws -> PushedRequestRecord? {
        try record(
            PushedRequestRecord.self,
            from: try await writes.raw("DELETE FROM signet_pushed_requests WHERE uri_hash = \(bind: uriHash) RETURNING data").first())
    }
}
