// The token endpoint alone: authorization codes made beforehand, redeemed with PKCE and private_key_jwt.
import Foundation
import SignetCore
import SignetRelyingParty
import SignetServer
import SignetStorage
import SignetStore

/// Authorization codes written straight into the store before a row is measured, so the row
/// costs the server only what `/token` does for a code (the figure): the client
/// assertion checked and spent, the code redeemed once, the grant and user read, an access token
/// and an ES256 ID token signed, a refresh token stored. The login that would make each code is
/// measured by the full-flow rows.
struct PreparedCodes: Sendable {
    /// One worker's codes and the verifier, redirect and nonce they were made for.
    final class Queue: Sendable {
        let codes: PreparedQueue<String>
        let pending: PendingAuthorization
        init(codes: [String], pending: PendingAuthorization) { (self.codes, self.pending) = (PreparedQueue(codes), pending) }
        func next() -> String? { codes.next() }
    }

    /// Writes `perWorker` codes for each of `users` (bench-0 … ) into the store at `location`.
    static func make(location: String, clientID: String, redirectURI: String, users: [BenchUser], perWorker: Int) async throws -> [Queue] {
        let store = try await SQLStore.open(location)
        do {
            // One flush for the whole batch, not one per code.
            let queues = try await store.durableWrites {
                try await write(into: store, clientID: clientID, redirectURI: redirectURI, users: users, perWorker: perWorker)
            }
            try await store.close()
            return queues
        } catch {
            try? await store.close()
            throw error
        }
    }

    private static func write(into store: SQLStore, clientID: String, redirectURI: String, users: [BenchUser], perWorker: Int) async throws -> [Queue]
    {
        let now = Date()
        var queues: [Queue] = []
        for user in users {
            guard let record = try await store.user(username: user.username) else { throw SignetError(.notFound, "no bench user \(user.username)") }
            let verifier = SecureRandom().token(byteCount: 32)
            let pending = PendingAuthorization(
                state: "bench", nonce: SecureRandom().token(byteCount: 16), codeVerifier: verifier, redirectURI: redirectURI)
            var codes: [String] = []
            for _ in 0..<perWorker {
                var grant = GrantRecord(
                    id: SecureRandom().token(byteCount: 16), clientID: clientID, userID: record.id, scope: "openid profile", authTime: now,
                    acr: AuthorizationRequestValidator.acrOneFactor, amr: ["pwd"], sessionID: nil, createdAt: now,
                    expiresAt: now.addingTimeInterval(86_400))
                grant.userStamp = record.securityStamp
                try await store.insertGrant(grant)
                let code = SecureRandom().token(byteCount: 32)
                // Longer-lived than real codes (60 s) only so the batch outlives its writing.
                try await store.insertCode(
                    AuthorizationCodeRecord(
                        codeHash: SecretDigest.hex(code), grantID: grant.id, clientID: clientID, redirectURI: redirectURI,
                        codeChallenge: PKCE.challenge(for: verifier), nonce: pending.nonce, expiresAt: now.addingTimeInterval(900)))
                codes.append(code)
            }
            queues.append(Queue(codes: codes, pending: pending))
        }
        return queues
    }
}

/// What one worker of a row takes, one item at a time, in the order it was made (oldest first,
/// so what expires first goes first).
final class PreparedQueue<Item: Sendable>: @unchecked Sendable {
    // Used by exactly one worker at a time, so plain storage suffices. Kept newest first, so
    // `popLast` takes the oldest.
    private var items: [Item]
    init(_ items: [Item]) { self.items = items.reversed() }
    func next() -> Item? { items.popLast() }
}
