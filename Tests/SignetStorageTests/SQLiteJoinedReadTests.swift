import Foundation
import SQLKit
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetStore
import Testing

/// The joined read of a code and its grant decodes the grant only while the code is unspent: a
/// replay must be answered as one, and its grant revoked, even if that grant cannot be read.
@Suite("SQLite: a spent code is read without its grant")
struct SQLiteJoinedReadTests {
    @Test(
        "a spent code whose grant no longer decodes is still read (as spent), and its grant can still be revoked; an unspent one with such a grant is refused as unreadable"
    )
    func spentCodeWithUnreadableGrant() async throws {
        try await withTemporarySQLiteStore("joined-read") { store, _, _ in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let grant = GrantRecord(
                id: "g1", clientID: "c", userID: "u", scope: "openid", authTime: now, acr: "a", amr: ["pwd"], sessionID: nil, createdAt: now,
                expiresAt: now.addingTimeInterval(3600))
            try await store.insertGrant(grant)
            for hash in ["spent", "unspent"] {
                try await store.insertCode(
                    AuthorizationCodeRecord(
                        codeHash: hash, grantID: "g1", clientID: "c", redirectURI: "com.example.app:/cb", codeChallenge: "x", nonce: "n",
                        expiresAt: now.addingTimeInterval(60)))
            }
            _ = try await store.redeemCode(hash: "spent", at: now)
            try await store.database.raw("UPDATE signet_grants SET data = 'not json' WHERE id = 'g1'").run()

            let spent = try #require(try await store.codeWithGrant(hash: "spent"))
            #expect(spent.code.redeemedAt == now)
            #expect(spent.grant == nil)
            #expect(try await store.redeemCode(hash: "spent", at: now) == .alreadyUsed(grantID: "g1"))
            try await store.revokeGrant(id: "g1", at: now)
            let revoked = try await store.database.raw("SELECT revoked_at FROM signet_grants WHERE id = 'g1'").first()?.decode(
                column: "revoked_at", as: Int64?.self)
            #expect(revoked != nil)
            // Unspent, the grant is needed for the checks before spending: it is not skipped.
            await #expect(throws: SignetError.self) { _ = try await store.codeWithGrant(hash: "unspent") }
        }
    }
}
