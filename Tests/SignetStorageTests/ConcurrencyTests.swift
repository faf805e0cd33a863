import Foundation
import SignetCore
import SignetServer
import SignetStorage
import SignetStore
import Testing

/// Single use under concurrency: 50 racers, exactly one winner, for each backend.
@Suite("Single use under concurrency")
struct ConcurrencyTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func countWinners(_ racers: Int = 50, _ attempt: @escaping @Sendable () async throws -> Bool) async throws -> Int {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<racers { group.addTask { try await attempt() } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
    }

    func seed(_ store: any SignetStore) async throws {
        try await store.insertGrant(
            GrantRecord(
                id: "g", clientID: "c", userID: "u", scope: "openid", authTime: now, acr: "a", amr: [], sessionID: nil, createdAt: now,
                expiresAt: now.addingTimeInterval(600)))
        try await store.insertCode(
            AuthorizationCodeRecord(
                codeHash: "code", grantID: "g", clientID: "c", redirectURI: "x:/y", codeChallenge: "c", nonce: nil,
                expiresAt: now.addingTimeInterval(60)))
        try await store.insertRefreshToken(
            RefreshTokenRecord(tokenHash: "refresh", grantID: "g", clientID: "c", expiresAt: now.addingTimeInterval(60)))
    }

    @Test("50 concurrent redemptions of one code, one refresh token or one jti yield exactly one success", arguments: StoreBackend.available)
    func oneWinner(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await seed(store)
            let now = self.now
            #expect(
                try await countWinners { if case .redeemed = try await store.redeemCode(hash: "code", at: now) { return true } else { return false } }
                    == 1)
            #expect(
                try await countWinners {
                    if case .redeemed = try await store.useRefreshToken(hash: "refresh", at: now) { return true } else { return false }
                } == 1)
            #expect(try await countWinners { try await store.recordOnce(key: "jti", expiresAt: now.addingTimeInterval(60), now: now) } == 1)
        }
    }

    @Test("across several instances sharing one PostgreSQL, each value is still used once", .enabled(if: StoreBackend.postgresURL != nil))
    func severalInstances() async throws {
        let schema = StoreBackend.freshSchema()
        let url = try #require(StoreBackend.postgresURL)
        var instances: [SQLStore] = []
        for _ in 0..<4 { instances.append(try await SQLStore.postgres(url: url, schema: schema, maxConnections: 4)) }
        let stores = instances
        do {
            try await seed(stores[0])
            let now = self.now
            let codeWinners = try await countWinners {
                let store = stores.randomElement()!
                if case .redeemed = try await store.redeemCode(hash: "code", at: now) { return true }
                return false
            }
            #expect(codeWinners == 1)
            let refreshWinners = try await countWinners {
                if case .redeemed = try await stores.randomElement()!.useRefreshToken(hash: "refresh", at: now) { return true }
                return false
            }
            #expect(refreshWinners == 1)
            let jtiWinners = try await countWinners {
                try await stores.randomElement()!.recordOnce(key: "jti", expiresAt: now.addingTimeInterval(60), now: now)
            }
            #expect(jtiWinners == 1)
        }
        for store in stores { try? await store.close() }
    }
}
