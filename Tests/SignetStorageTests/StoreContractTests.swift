import Foundation
import SignetCore
import SignetServer
import SignetStorage
import SignetStore
import Testing

/// One contract, three stores: what the provider relies on must hold for each.
@Suite("Store contract")
struct StoreContractTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func client(_ id: String) -> ClientRecord {
        ClientRecord(id: id, name: "Client \(id)", authMethod: .none, redirectURIs: ["com.example.app:/cb"], createdAt: now)
    }

    func user(_ name: String) -> UserRecord {
        UserRecord(id: UUID().uuidString, username: name, passwordHash: "$2b$04$hash", email: "\(name)@example.com", createdAt: now)
    }

    func grant(_ id: String = UUID().uuidString) -> GrantRecord {
        GrantRecord(
            id: id, clientID: "c", userID: "u", scope: "openid", authTime: now, acr: "a", amr: ["pwd"], sessionID: nil, createdAt: now,
            expiresAt: now.addingTimeInterval(3600))
    }

    func code(_ hash: String, grantID: String) -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(
            codeHash: hash, grantID: grantID, clientID: "c", redirectURI: "com.example.app:/cb", codeChallenge: "x", nonce: "n",
            expiresAt: now.addingTimeInterval(60))
    }

    @Test("PostgreSQL is configured whenever CI runs, so its contract is never silently skipped")
    func postgresInCI() {
        if ProcessInfo.processInfo.environment["CI"] != nil {
            #expect(StoreBackend.postgresURL != nil, "set SIGNET_TEST_POSTGRES_URL (scripts/postgres-start)")
        }
    }

    @Test("clients: insert, read, list, refuse duplicates, delete", arguments: StoreBackend.available)
    func clients(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertClient(client("b"))
            try await store.insertClient(client("a"))
            #expect(try await store.client(id: "a") == client("a"))
            #expect(try await store.listClients().map(\.id) == ["a", "b"])
            await #expect(throws: SignetError(.conflict, "")) { try await store.insertClient(client("a")) }
            #expect(try await store.deleteClient(id: "a"))
            #expect(try await store.deleteClient(id: "a") == false)
            #expect(try await store.client(id: "a") == nil)
        }
    }

    @Test(
        "a client is replaced only at the version read: a stale version changes nothing, and parallel administrative changes of different settings are all kept",
        arguments: StoreBackend.available)
    func clientCompareAndSwap(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertClient(client("a"))
            let (read, version) = try #require(try await store.clientForChange(id: "a"))
            var renamed = read
            renamed.name = "first"
            #expect(try await store.replaceClient(renamed, ifVersion: version))
            var stale = read
            stale.name = "second"
            #expect(try await store.replaceClient(stale, ifVersion: version) == false)
            #expect(try await store.client(id: "a")?.name == "first")
            #expect(try await store.clientForChange(id: "missing") == nil)

            // Eight administrators change eight settings at once: none is lost.
            let admin = SignetAdmin(store: store, passwordHashCost: 4)
            var changes: [SignetAdmin.ClientChange] = []
            changes.append(SignetAdmin.ClientChange(name: "renamed"))
            changes.append(SignetAdmin.ClientChange(nativeLogin: true))
            changes.append(SignetAdmin.ClientChange(requireDPoP: true))
            changes.append(SignetAdmin.ClientChange(minimumACR: .some("urn:signet:loa:2")))
            changes.append(SignetAdmin.ClientChange(resources: ["https://api.example.com"]))
            changes.append(SignetAdmin.ClientChange(apiScopes: ["accounts"]))
            var lifetime = SignetAdmin.ClientChange()
            lifetime.accessTokenLifetime = .some(900)
            changes.append(lifetime)
            changes.append(SignetAdmin.ClientChange(requireSignedRequestObject: true))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for change in changes { group.addTask { _ = try await admin.updateClient(id: "a", change) } }
                try await group.waitForAll()
            }
            let final = try #require(try await store.client(id: "a"))
            #expect(final.name == "renamed" && final.nativeLogin && final.requireDPoP && final.minimumACR == "urn:signet:loa:2")
            #expect(final.resources == ["https://api.example.com"] && final.allowedScopes.contains("accounts"))
            #expect(final.accessTokenLifetime == 900 && final.requireSignedRequestObject)
        }
    }

    @Test(
        "a key holding the NUL character finds nothing and spends nothing on every store (PostgreSQL text cannot hold it)",
        arguments: StoreBackend.available)
    func nulCharacter(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertClient(client("a"))
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            #expect(try await store.client(id: "a\u{0}") == nil)
            #expect(try await store.user(username: "alice\u{0}") == nil)
            #expect(try await store.user(id: "\u{0}") == nil)
            #expect(try await store.loginSession(id: "s\u{0}") == nil)
            #expect(try await store.deviceInstance(id: "\u{0}") == nil)
            #expect(try await store.redeemCode(hash: "c\u{0}", at: now) == .unknown)
            #expect(try await store.useRefreshToken(hash: "r\u{0}", at: now) == .unknown)
            #expect(try await store.consumePushedRequest(uriHash: "\u{0}") == nil)
            #expect(try await store.deleteClient(id: "a\u{0}") == false)
            #expect(try await store.client(id: "a") == client("a"))
        }
    }

    @Test("users: unique usernames, lookup by name and id, password update, delete", arguments: StoreBackend.available)
    func users(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let alice = user("alice")
            try await store.insertUser(alice)
            #expect(try await store.user(username: "alice") == alice)
            #expect(try await store.user(id: alice.id) == alice)
            await #expect(throws: SignetError(.conflict, "")) { try await store.insertUser(user("alice")) }
            var changed = alice
            changed.passwordHash = "$2b$04$new"
            #expect(try await store.replaceUser(changed, expectedStamp: alice.securityStamp))
            #expect(try await store.user(id: alice.id)?.passwordHash == "$2b$04$new")
            #expect(try await store.deleteUser(id: alice.id))
            #expect(try await store.user(username: "alice") == nil)
        }
    }

    @Test("device instances: insert, read back, unknown ids are nil, expired ones are purged", arguments: StoreBackend.available)
    func deviceInstances(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let instance = DeviceInstanceRecord(id: "inst-1", clientID: "app", createdAt: now, expiresAt: now.addingTimeInterval(600))
            try await store.insertDeviceInstance(instance)
            #expect(try await store.deviceInstance(id: "inst-1") == instance)
            #expect(try await store.deviceInstance(id: "inst-2") == nil)
            // The first user's login keeps it; of two users racing, one wins.
            let claims = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for user in ["u1", "u2"] { group.addTask { (user, try await store.claimDeviceInstance(id: "inst-1", userID: user, now: now)) } }
                return try await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
            }
            #expect(claims.values.filter { $0 }.count == 1)
            let owner = try #require(claims.first { $0.value }?.key)
            #expect(try await store.claimDeviceInstance(id: "inst-1", userID: owner, now: now))
            #expect(try await store.deviceInstance(id: "inst-1")?.userID == owner)
            #expect(try await !store.claimDeviceInstance(id: "inst-1", userID: owner, now: now.addingTimeInterval(601)), "expired")
            #expect(try await !store.claimDeviceInstance(id: "inst-2", userID: owner, now: now), "unknown")
            try await store.purgeExpired(before: now.addingTimeInterval(599))
            #expect(try await store.deviceInstance(id: "inst-1")?.id == "inst-1")
            try await store.purgeExpired(before: now.addingTimeInterval(601))
            #expect(try await store.deviceInstance(id: "inst-1") == nil)
        }
    }

    @Test(
        "an instance id is consumed once by 50 racers; devices are unique by instance and certificate; CAs come newest first",
        arguments: StoreBackend.available)
    func devices(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let instance = DeviceInstanceRecord(id: "inst-9", clientID: "app", createdAt: now, expiresAt: now.addingTimeInterval(600))
            try await store.insertDeviceInstance(instance)
            let winners = try await withThrowingTaskGroup(of: DeviceInstanceRecord?.self) { group in
                for _ in 0..<50 { group.addTask { try await store.consumeDeviceInstance(id: "inst-9") } }
                return try await group.reduce(into: [DeviceInstanceRecord]()) { if let won = $1 { $0.append(won) } }
            }
            #expect(winners == [instance])
            let device = DeviceRecord(
                instanceID: "inst-9", clientID: "app", userID: "u1", grantID: "g1", certificateSerial: "01", certificateThumbprint: "t1",
                certificateNotAfter: now.addingTimeInterval(86_400), createdAt: now)
            try await store.insertDevice(device)
            #expect(try await store.device(instanceID: "inst-9") == device)
            #expect(try await store.devices(userID: "u1") == [device])
            #expect(try await store.devices(userID: "u2").isEmpty)
            await #expect(throws: SignetError.self) { try await store.insertDevice(device) }
            for (id, age) in [("old", 100.0), ("new", 10.0)] {
                try await store.insertDeviceCA(
                    DeviceCARecord(
                        id: id, privateKeyPEM: "k", certificatePEM: "c", createdAt: now.addingTimeInterval(-age),
                        notAfter: now.addingTimeInterval(1_000)))
            }
            #expect(try await store.deviceCAs().map(\.id) == ["new", "old"])
        }
    }

    @Test("signing keys: insert, update status, delete", arguments: StoreBackend.available)
    func signingKeys(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let key = SigningKeyFactory.make(status: .next, now: now)
            try await store.insertSigningKey(key)
            try await store.updateSigningKey(kid: key.kid, status: .retired, publishUntil: now.addingTimeInterval(600))
            let stored = try #require(try await store.signingKeys().first)
            #expect(stored.status == .retired)
            #expect(stored.publishUntil == now.addingTimeInterval(600))
            try await store.deleteSigningKey(kid: key.kid)
            #expect(try await store.signingKeys().isEmpty)
        }
    }

    @Test("audit events: filtered by user, client and time, newest first, limited; purged by age", arguments: StoreBackend.available)
    func auditEvents(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let user = "user-\(UUID().uuidString)", client = "client-\(UUID().uuidString)"
            for (offset, kind, userID, clientID) in [
                (0.0, "login.failed", user, client), (10, "login.succeeded", user, client), (20, "client.updated", nil, client),
                (30, "user.locked", user, nil),
            ] as [(TimeInterval, String, String?, String?)] {
                try await store.appendAuditEvent(
                    AuditEventRecord(
                        id: UUID().uuidString, at: now.addingTimeInterval(offset), kind: kind, userID: userID, clientID: clientID, actor: "user",
                        target: nil,
                        reason: nil))
            }
            #expect(try await store.auditEvents(AuditQuery(userID: user)).map(\.kind) == ["user.locked", "login.succeeded", "login.failed"])
            #expect(try await store.auditEvents(AuditQuery(clientID: client)).map(\.kind) == ["client.updated", "login.succeeded", "login.failed"])
            #expect(try await store.auditEvents(AuditQuery(userID: user, clientID: client, limit: 1)).map(\.kind) == ["login.succeeded"])
            #expect(
                try await store.auditEvents(AuditQuery(clientID: client, since: now.addingTimeInterval(10))).map(\.kind) == [
                    "client.updated", "login.succeeded",
                ])
            #expect(try await store.purgeAuditEvents(before: now.addingTimeInterval(15)) >= 2)
            #expect(try await store.auditEvents(AuditQuery(clientID: client)).map(\.kind) == ["client.updated"])
        }
    }

    @Test("a code is redeemed once; later attempts see a replay; unknown codes are unknown", arguments: StoreBackend.available)
    func codeRedemption(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertGrant(grant("g1"))
            try await store.insertCode(code("h1", grantID: "g1"))
            guard case .redeemed(let record) = try await store.redeemCode(hash: "h1", at: now) else {
                Issue.record("first redemption should win")
                return
            }
            #expect(record.nonce == "n")
            #expect(try await store.redeemCode(hash: "h1", at: now) == .alreadyUsed(grantID: "g1"))
            #expect(try await store.redeemCode(hash: "nope", at: now) == .unknown)
        }
    }

    @Test("refresh tokens are used once, and revoking the grant spends the whole family", arguments: StoreBackend.available)
    func refreshTokens(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertGrant(grant("g1"))
            for hash in ["r1", "r2"] {
                try await store.insertRefreshToken(
                    RefreshTokenRecord(tokenHash: hash, grantID: "g1", clientID: "c", expiresAt: now.addingTimeInterval(60)))
            }
            guard case .redeemed = try await store.useRefreshToken(hash: "r1", at: now) else {
                Issue.record("first use should win")
                return
            }
            #expect(try await store.useRefreshToken(hash: "r1", at: now) == .alreadyUsed(grantID: "g1"))
            #expect(try await store.revokeGrant(id: "g1", at: now), "a live grant is revoked now")
            #expect(try await store.revokeGrant(id: "g1", at: now.addingTimeInterval(5)) == false, "revoking again changes nothing")
            #expect(try await store.revokeGrant(id: "no-such-grant", at: now) == false)
            #expect(try await store.grant(id: "g1")?.revokedAt == now)
            #expect(try await store.refreshToken(hash: "r2")?.usedAt != nil)
            #expect(try await store.useRefreshToken(hash: "r2", at: now) == .alreadyUsed(grantID: "g1"))
        }
    }

    @Test("a login session changes only from the version it was read at, and is consumed once", arguments: StoreBackend.available)
    func loginSessions(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let request = ValidatedAuthorizationRequest(
                clientID: "c", redirectURI: "com.example.app:/cb", scope: "openid", state: "s", nonce: nil, codeChallenge: "x")
            let record = LoginSessionRecord(id: "p1", channel: .api, request: request, step: .selectScenario, expiresAt: now.addingTimeInterval(600))
            try await store.insertLoginSession(record)
            #expect(try await store.loginSession(id: "p1") == record)
            var next = record
            next.step = .usernamePassword
            next.version = 1
            let applied = try await store.replaceLoginSession(next, expectedVersion: 0)
            let stale = try await store.replaceLoginSession(next, expectedVersion: 0)
            #expect(applied)
            #expect(!stale)
            #expect(try await store.loginSession(id: "p1") == next)
            #expect(try await store.consumeLoginSession(id: "p1") == next)
            #expect(try await store.consumeLoginSession(id: "p1") == nil)
        }
    }

    @Test("remember tokens: insert, find, revoke one or all of a user's", arguments: StoreBackend.available)
    func rememberTokens(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            for (hash, user) in [("t1", "u1"), ("t2", "u1"), ("t3", "u2")] {
                try await store.insertRememberToken(
                    RememberTokenRecord(tokenHash: hash, clientID: "c", userID: user, createdAt: now, expiresAt: now.addingTimeInterval(60)))
            }
            #expect(try await store.rememberToken(hash: "t1")?.userID == "u1")
            try await store.deleteRememberToken(hash: "t3")
            #expect(try await store.rememberToken(hash: "t3") == nil)
            #expect(try await store.deleteRememberTokens(userID: "u1") == 2)
            #expect(try await store.rememberToken(hash: "t2") == nil)
        }
    }

    @Test("a named secret is stored once and then always the same", arguments: StoreBackend.available)
    func secrets(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let first = try await store.secret(named: "k", orStore: "one")
            let second = try await store.secret(named: "k", orStore: "two")
            #expect(first == "one")
            #expect(second == "one")
        }
    }

    @Test("codes can be read without being spent", arguments: StoreBackend.available)
    func codeLookup(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertGrant(grant("g2"))
            try await store.insertCode(code("h2", grantID: "g2"))
            #expect(try await store.code(hash: "h2")?.redeemedAt == nil)
            _ = try await store.redeemCode(hash: "h2", at: now)
            #expect(try await store.code(hash: "h2")?.redeemedAt == now)
        }
    }

    @Test(
        "a code or refresh token is read with its grant as the two reads apart give it (revoked or not, bound to a device or not, grant gone or not); once spent, without its grant",
        arguments: StoreBackend.available)
    func readsWithGrant(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertGrant(grant("g3"))
            try await store.insertCode(code("h3", grantID: "g3"))
            try await store.insertRefreshToken(
                RefreshTokenRecord(tokenHash: "r3", grantID: "g3", clientID: "c", expiresAt: now.addingTimeInterval(60)))
            try await store.insertCode(code("orphan", grantID: "no-such-grant"))

            let fresh = try #require(try await store.codeWithGrant(hash: "h3"))
            #expect(fresh.code == (try await store.code(hash: "h3")))
            #expect(fresh.grant == (try await store.grant(id: "g3")))
            #expect(fresh.grant?.revokedAt == nil && fresh.grant?.deviceID == nil)

            // What statements change beside the records' JSON shows in the joined read too.
            #expect(try await store.bindGrant(id: "g3", toDevice: "device-1", replacing: nil))
            try await store.insertCode(code("h4", grantID: "g3"))
            try await store.revokeGrant(id: "g3", at: now)
            let unspent = try #require(try await store.codeWithGrant(hash: "h4"))
            #expect(unspent.code.redeemedAt == nil)
            #expect(unspent.grant?.revokedAt == now)
            #expect(unspent.grant?.deviceID == "device-1")
            #expect(unspent.grant == (try await store.grant(id: "g3")))

            // Spent (the grant's revocation spent the refresh token too): read without the grant.
            _ = try await store.redeemCode(hash: "h3", at: now)
            let spent = try #require(try await store.codeWithGrant(hash: "h3"))
            #expect(spent.code.redeemedAt == now)
            #expect(spent.grant == nil)
            let token = try #require(try await store.refreshTokenWithGrant(hash: "r3"))
            #expect(token.token == (try await store.refreshToken(hash: "r3")))
            #expect(token.token.usedAt != nil)
            #expect(token.grant == nil)

            let orphan = try #require(try await store.codeWithGrant(hash: "orphan"))
            #expect(orphan.code.grantID == "no-such-grant")
            #expect(orphan.grant == nil)
            #expect(try await store.codeWithGrant(hash: "unknown") == nil)
            #expect(try await store.refreshTokenWithGrant(hash: "unknown") == nil)
        }
    }

    @Test("an unused refresh token is read with its grant", arguments: StoreBackend.available)
    func refreshTokenReadWithGrant(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertGrant(grant("g5"))
            try await store.insertRefreshToken(
                RefreshTokenRecord(tokenHash: "r5", grantID: "g5", clientID: "c", expiresAt: now.addingTimeInterval(60)))
            #expect(try await store.bindGrant(id: "g5", toDevice: "device-5", replacing: nil))
            let read = try #require(try await store.refreshTokenWithGrant(hash: "r5"))
            #expect(read.token.usedAt == nil)
            #expect(read.grant?.deviceID == "device-5")
            #expect(read.grant == (try await store.grant(id: "g5")))
        }
    }

    @Test(
        "spending a code or refresh token with its grant gives the winner the grant and its user as they stand at the spend (revoked, bound to a device, locked, gone), and losers none",
        arguments: StoreBackend.available)
    func spendsWithGrant(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            var owner = UserRecord(id: "u", username: "owner", passwordHash: "$2b$04$hash", securityStamp: "s1", createdAt: now)
            try await store.insertUser(owner)
            try await store.insertGrant(grant("g6"))
            try await store.insertCode(code("h6", grantID: "g6"))
            try await store.insertCode(code("h7", grantID: "g6"))
            try await store.insertCode(code("orphan6", grantID: "no-such-grant"))
            for hash in ["r6", "r7"] {
                try await store.insertRefreshToken(
                    RefreshTokenRecord(tokenHash: hash, grantID: "g6", clientID: "c", expiresAt: now.addingTimeInterval(60)))
            }

            let first = try await store.redeemCodeWithGrant(hash: "h6", at: now)
            guard case .redeemed(let redeemed) = first.redemption else {
                Issue.record("the first spend should win")
                return
            }
            #expect(redeemed.redeemedAt == now && redeemed.nonce == "n")
            #expect(first.grant == (try await store.grant(id: "g6")))
            #expect(first.grant?.revokedAt == nil && first.grant?.deviceID == nil)
            #expect(first.user == owner)
            let again = try await store.redeemCodeWithGrant(hash: "h6", at: now)
            #expect(again.redemption == .alreadyUsed(grantID: "g6") && again.grant == nil && again.user == nil)
            let unknown = try await store.redeemCodeWithGrant(hash: "nope", at: now)
            #expect(unknown.redemption == .unknown && unknown.grant == nil && unknown.user == nil)
            let orphan = try await store.redeemCodeWithGrant(hash: "orphan6", at: now)
            guard case .redeemed = orphan.redemption else {
                Issue.record("a code whose grant is gone is still spent")
                return
            }
            #expect(orphan.grant == nil && orphan.user == nil)

            // A refresh token spent: its grant, then a device binding made before the next spend shows.
            let token = try await store.useRefreshTokenWithGrant(hash: "r6", at: now)
            guard case .redeemed(let used) = token.redemption else {
                Issue.record("the first use should win")
                return
            }
            #expect(used.usedAt == now)
            #expect(token.grant == (try await store.grant(id: "g6")))
            #expect(token.user == owner)
            // A lock made before the next spend shows in the user it gets.
            owner.locked = true
            owner.securityStamp = "s2"
            #expect(try await store.replaceUser(owner, expectedStamp: "s1"))
            #expect(try await store.bindGrant(id: "g6", toDevice: "device-6", replacing: nil))
            let bound = try await store.useRefreshTokenWithGrant(hash: "r7", at: now)
            #expect(bound.grant?.deviceID == "device-6")
            #expect(bound.grant == (try await store.grant(id: "g6")))
            #expect(bound.user == owner && bound.user?.locked == true)
            let reused = try await store.useRefreshTokenWithGrant(hash: "r6", at: now)
            #expect(reused.redemption == .alreadyUsed(grantID: "g6") && reused.grant == nil && reused.user == nil)

            // A revocation made before the spend is in the grant the winner gets.
            try await store.revokeGrant(id: "g6", at: now)
            let late = try await store.redeemCodeWithGrant(hash: "h7", at: now.addingTimeInterval(1))
            guard case .redeemed = late.redemption else {
                Issue.record("an unspent code of a revoked grant is still spent once")
                return
            }
            #expect(late.grant?.revokedAt == now)
            #expect(late.user == owner && late.user?.locked == true, "a code spent after its user was locked gets the locked user")

            // A grant whose user is gone: the grant, and no user.
            try await store.insertGrant(
                GrantRecord(
                    id: "g8", clientID: "c", userID: "no-such-user", scope: "openid", authTime: now, acr: "a", amr: ["pwd"], sessionID: nil,
                    createdAt: now,
                    expiresAt: now.addingTimeInterval(3600)))
            try await store.insertCode(code("h8", grantID: "g8"))
            let userless = try await store.redeemCodeWithGrant(hash: "h8", at: now)
            #expect(userless.grant?.id == "g8" && userless.user == nil)
        }
    }

    @Test("signing keys behave alike in every store: duplicates ignored, unknown updates refused", arguments: StoreBackend.available)
    func signingKeyParity(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            var key = SigningKeyFactory.make(status: .next, now: now)
            try await store.insertSigningKey(key)
            key.status = .active
            try await store.insertSigningKey(key)
            #expect(try await store.signingKeys().map(\.status) == [.next])
            await #expect(throws: SignetError(.notFound, "")) { try await store.updateSigningKey(kid: "missing", status: .active, publishUntil: nil) }
        }
    }

    @Test("sessions: insert, find, delete", arguments: StoreBackend.available)
    func sessions(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let session = BrowserSessionRecord(
                idHash: "s1", sid: "sid", userID: "u", authTime: now, acr: "a", amr: ["pwd"], expiresAt: now.addingTimeInterval(60))
            try await store.insertSession(session)
            #expect(try await store.session(idHash: "s1") == session)
            try await store.deleteSession(idHash: "s1")
            #expect(try await store.session(idHash: "s1") == nil)
        }
    }

    @Test("a replay key is accepted once until it expires", arguments: StoreBackend.available)
    func replay(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let start = now
            let first = try await store.recordOnce(key: "jti-1", expiresAt: start.addingTimeInterval(60), now: start)
            let replayed = try await store.recordOnce(key: "jti-1", expiresAt: start.addingTimeInterval(60), now: start.addingTimeInterval(30))
            let afterExpiry = try await store.recordOnce(key: "jti-1", expiresAt: start.addingTimeInterval(200), now: start.addingTimeInterval(61))
            #expect(first)
            #expect(!replayed)
            #expect(afterExpiry)
        }
    }

    @Test("throttle counters add up, reset after the window, and clear", arguments: StoreBackend.available)
    func throttle(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let windowStart = now.addingTimeInterval(-86_400)
            #expect(try await store.recordFailure(key: "k", at: now, resetBefore: windowStart).failures == 1)
            #expect(try await store.recordFailure(key: "k", at: now, resetBefore: windowStart).failures == 2)
            #expect(try await store.throttle(key: "k")?.failures == 2)
            let later = now.addingTimeInterval(90_000)
            #expect(try await store.recordFailure(key: "k", at: later, resetBefore: later.addingTimeInterval(-86_400)).failures == 1)
            try await store.resetThrottle(key: "k", unchangedSince: try #require(try await store.throttle(key: "k")))
            #expect(try await store.throttle(key: "k") == nil)
        }
    }

    @Test("a conditional reset clears a record only if no failure was counted since it was read", arguments: StoreBackend.available)
    func conditionalReset(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let windowStart = now.addingTimeInterval(-60)
            _ = try await store.recordFailure(key: "k", at: now, resetBefore: windowStart)
            let seen = try #require(try await store.throttle(key: "k"))
            // Counted since: more failures, and a later one.
            _ = try await store.recordFailure(key: "k", at: now.addingTimeInterval(2), resetBefore: windowStart)
            try await store.resetThrottle(key: "k", unchangedSince: seen)
            #expect(try await store.throttle(key: "k")?.failures == 2)
            // Unchanged since it was read: cleared.
            let current = try #require(try await store.throttle(key: "k"))
            try await store.resetThrottle(key: "k", unchangedSince: current)
            #expect(try await store.throttle(key: "k") == nil)
            // A record started afresh after the window (one failure, but later) is kept.
            _ = try await store.recordFailure(key: "w", at: now, resetBefore: windowStart)
            let old = try #require(try await store.throttle(key: "w"))
            let later = now.addingTimeInterval(90_000)
            _ = try await store.recordFailure(key: "w", at: later, resetBefore: later.addingTimeInterval(-86_400))
            try await store.resetThrottle(key: "w", unchangedSince: old)
            #expect(try await store.throttle(key: "w")?.failures == 1)
        }
    }

    @Test(
        "a slot is taken before the look, counts until released or expired, and the look reads the limit's failures",
        arguments: StoreBackend.available)
    func throttleSlots(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let a1 = ThrottleSlot(key: "a", id: "1"), a2 = ThrottleSlot(key: "a", id: "2"), a3 = ThrottleSlot(key: "a", id: "3")
            let b1 = ThrottleSlot(key: "b", id: "1")
            // No failures yet: the look says so, and counts the new slot.
            var view = try await store.takeSlot(a1, expiresAt: now.addingTimeInterval(60), now: now, failuresKey: "fa")
            #expect(view == ThrottleSlotView(liveSlots: 1, failures: nil))
            _ = try await store.recordFailure(key: "fa", at: now, resetBefore: now.addingTimeInterval(-60))
            view = try await store.takeSlot(a2, expiresAt: now.addingTimeInterval(600), now: now, failuresKey: "fa")
            #expect(view.liveSlots == 2)
            #expect(view.failures?.failures == 1)
            #expect(view.failures?.key == "fa")
            // Another key's slots are its own.
            #expect(try await store.takeSlot(b1, expiresAt: now.addingTimeInterval(60), now: now, failuresKey: "fb").liveSlots == 1)
            // A slot past its expiry counts no more, though others keep being taken under its key.
            let later = now.addingTimeInterval(61)
            #expect(try await store.takeSlot(a3, expiresAt: later.addingTimeInterval(60), now: later, failuresKey: "fa").liveSlots == 2)
            // Released slots count no more; unknown ones, and none at all, are ignored.
            try await store.releaseSlots([a2, b1, ThrottleSlot(key: "a", id: "missing")])
            try await store.releaseSlots([])
            #expect(
                try await store.takeSlot(ThrottleSlot(key: "a", id: "4"), expiresAt: later.addingTimeInterval(60), now: later, failuresKey: "fa")
                    .liveSlots == 2)
            #expect(
                try await store.takeSlot(ThrottleSlot(key: "b", id: "2"), expiresAt: later.addingTimeInterval(60), now: later, failuresKey: "fb")
                    .liveSlots == 1)
            // A slot is its key and id together: releasing (c, 1) and (d, 2) leaves (c, 2) and (d, 1).
            for slot in [ThrottleSlot(key: "c", id: "1"), ThrottleSlot(key: "c", id: "2"), ThrottleSlot(key: "d", id: "1")] {
                _ = try await store.takeSlot(slot, expiresAt: later.addingTimeInterval(60), now: later, failuresKey: "f")
            }
            #expect(
                try await store.takeSlot(ThrottleSlot(key: "d", id: "2"), expiresAt: later.addingTimeInterval(60), now: later, failuresKey: "f")
                    .liveSlots == 2)
            try await store.releaseSlots([ThrottleSlot(key: "c", id: "1"), ThrottleSlot(key: "d", id: "2")])
            #expect(
                try await store.takeSlot(ThrottleSlot(key: "c", id: "3"), expiresAt: later.addingTimeInterval(60), now: later, failuresKey: "f")
                    .liveSlots == 2)
            #expect(
                try await store.takeSlot(ThrottleSlot(key: "d", id: "3"), expiresAt: later.addingTimeInterval(60), now: later, failuresKey: "f")
                    .liveSlots == 2)
            // A slot counts until its expiry, not at it.
            let end = later.addingTimeInterval(60)
            #expect(
                try await store.takeSlot(ThrottleSlot(key: "d", id: "4"), expiresAt: end.addingTimeInterval(60), now: end, failuresKey: "f").liveSlots
                    == 1)
        }
    }

    @Test("purging removes expired throttle slots and keeps live ones", arguments: StoreBackend.available)
    func purgeThrottleSlots(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.takeSlot(ThrottleSlot(key: "k", id: "old"), expiresAt: now.addingTimeInterval(10), now: now, failuresKey: "f")
            _ = try await store.takeSlot(ThrottleSlot(key: "k", id: "live"), expiresAt: now.addingTimeInterval(1000), now: now, failuresKey: "f")
            try await store.purgeExpired(before: now.addingTimeInterval(100))
            // Counted at a time when both would count: only the live one is left.
            #expect(
                try await store.takeSlot(ThrottleSlot(key: "k", id: "new"), expiresAt: now.addingTimeInterval(1000), now: now, failuresKey: "f")
                    .liveSlots == 2)
            try await store.releaseSlots([ThrottleSlot(key: "k", id: "live"), ThrottleSlot(key: "k", id: "new")])
            #expect(
                try await store.takeSlot(ThrottleSlot(key: "k", id: "last"), expiresAt: now.addingTimeInterval(1000), now: now, failuresKey: "f")
                    .liveSlots == 1)
        }
    }

    @Test("purging removes what has expired and keeps what has not", arguments: StoreBackend.available)
    func purge(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertSession(
                BrowserSessionRecord(idHash: "old", sid: "1", userID: "u", authTime: now, acr: "a", amr: [], expiresAt: now.addingTimeInterval(10)))
            try await store.insertSession(
                BrowserSessionRecord(idHash: "new", sid: "2", userID: "u", authTime: now, acr: "a", amr: [], expiresAt: now.addingTimeInterval(1000)))
            try await store.purgeExpired(before: now.addingTimeInterval(100))
            #expect(try await store.session(idHash: "old") == nil)
            #expect(try await store.session(idHash: "new") != nil)
        }
    }
}

@Suite("Store contract: sliding-window budgets")
struct LimitStoreContractTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("limits: insert once, compare-and-swap on the version, purge when expired", arguments: StoreBackend.available)
    func limits(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            #expect(try await store.limit(key: "k") == nil)
            let first = LimitRecord(key: "k", uses: [now], version: 1, expiresAt: now.addingTimeInterval(60))
            #expect(try await store.replaceLimit(first, expectedVersion: nil))
            #expect(try await store.replaceLimit(first, expectedVersion: nil) == false)
            #expect(try await store.limit(key: "k") == first)
            let second = LimitRecord(key: "k", uses: [now, now.addingTimeInterval(1)], version: 2, expiresAt: now.addingTimeInterval(61))
            #expect(try await store.replaceLimit(second, expectedVersion: 0) == false)
            #expect(try await store.replaceLimit(second, expectedVersion: 1))
            #expect(try await store.replaceLimit(second, expectedVersion: 1) == false)
            #expect(try await store.limit(key: "k") == second)
            try await store.purgeExpired(before: now.addingTimeInterval(120))
            #expect(try await store.limit(key: "k") == nil)
        }
    }

    @Test("50 racers compare-and-swap one budget: exactly one wins each version", arguments: StoreBackend.available)
    func racers(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let base = LimitRecord(key: "race", uses: [], version: 1, expiresAt: now.addingTimeInterval(60))
            #expect(try await store.replaceLimit(base, expectedVersion: nil))
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        let next = LimitRecord(
                            key: "race", uses: [self.now.addingTimeInterval(Double(index))], version: 2, expiresAt: self.now.addingTimeInterval(60))
                        return try await store.replaceLimit(next, expectedVersion: 1)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
        }
    }
}

@Suite("Store contract: everything of one user")
struct UserRevocationContractTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func grant(_ id: String, user: String) -> GrantRecord {
        GrantRecord(
            id: id, clientID: "c", userID: user, scope: "openid", authTime: now, acr: "a", amr: ["pwd"], sessionID: nil, createdAt: now,
            expiresAt: now.addingTimeInterval(3600))
    }

    func refresh(_ hash: String, grant: String) -> RefreshTokenRecord {
        RefreshTokenRecord(tokenHash: hash, grantID: grant, clientID: "c", expiresAt: now.addingTimeInterval(3600))
    }

    func session(_ hash: String, user: String) -> BrowserSessionRecord {
        BrowserSessionRecord(idHash: hash, sid: hash, userID: user, authTime: now, acr: "a", amr: ["pwd"], expiresAt: now.addingTimeInterval(3600))
    }

    @Test("revokeGrants and deleteSessions end one user's grants, refresh tokens and sessions, and nobody else's", arguments: StoreBackend.available)
    func revokeOneUser(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            try await store.insertGrant(grant("g1", user: "alice"))
            try await store.insertGrant(grant("g2", user: "alice"))
            try await store.insertGrant(grant("g3", user: "bob"))
            try await store.insertRefreshToken(refresh("r1", grant: "g1"))
            try await store.insertRefreshToken(refresh("r3", grant: "g3"))
            try await store.insertSession(session("s1", user: "alice"))
            try await store.insertSession(session("s3", user: "bob"))
            #expect(try await store.revokeGrants(userID: "alice", at: now) == 2)
            #expect(try await store.revokeGrants(userID: "alice", at: now) == 0)
            #expect(try await store.grant(id: "g1")?.revokedAt != nil)
            #expect(try await store.grant(id: "g3")?.revokedAt == nil)
            #expect(try await store.useRefreshToken(hash: "r1", at: now) == .alreadyUsed(grantID: "g1"))
            if case .redeemed = try await store.useRefreshToken(hash: "r3", at: now) {} else { Issue.record("bob's refresh token was revoked") }
            #expect(try await store.deleteSessions(userID: "alice") == 1)
            #expect(try await store.session(idHash: "s1") == nil)
            #expect(try await store.session(idHash: "s3") != nil)
        }
    }

    @Test("replaceClient and replaceUser change stored records; unknown ones are reported", arguments: StoreBackend.available)
    func replaceRecords(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            var client = ClientRecord(id: "c", name: "C", authMethod: .none, redirectURIs: ["com.example.app:/cb"], createdAt: now)
            try await store.insertClient(client)
            client.minimumACR = AssuranceLevel.twoFactors
            client.nativeLogin = true
            #expect(try await store.replaceClient(client))
            #expect(try await store.client(id: "c") == client)
            #expect(try await store.replaceClient(ClientRecord(id: "x", name: "X", authMethod: .none, redirectURIs: [], createdAt: now)) == false)
            var user = UserRecord(id: "u1", username: "alice", passwordHash: "$2b$04$hash", securityStamp: "s1", createdAt: now)
            try await store.insertUser(user)
            user.locked = true
            user.securityStamp = "s2"
            #expect(try await store.replaceUser(user, expectedStamp: "s1"))
            #expect(try await store.user(username: "alice")?.locked == true)
            // A writer that read the old stamp loses: its change cannot undo the one that came first.
            var stale = user
            stale.locked = false
            stale.securityStamp = "s3"
            #expect(try await store.replaceUser(stale, expectedStamp: "s1") == false)
            #expect(try await store.user(username: "alice")?.locked == true)
            // Users stored without a stamp are changed by naming none.
            let old = UserRecord(id: "u3", username: "carol", passwordHash: "h", createdAt: now)
            try await store.insertUser(old)
            var carol = old
            carol.securityStamp = "c1"
            #expect(try await store.replaceUser(carol, expectedStamp: "c0") == false)
            #expect(try await store.replaceUser(carol, expectedStamp: nil))
            #expect(
                try await store.replaceUser(UserRecord(id: "u2", username: "bob", passwordHash: "h", createdAt: now), expectedStamp: nil) == false)
        }
    }

    @Test("records stored before min_acr, native_login and locked existed still read, with safe defaults")
    func olderRecordsDecode() throws {
        let client =
            #"{"id":"c","name":"C","authMethod":"none","redirectURIs":["com.example.app:/cb"],"postLogoutRedirectURIs":[],"allowedScopes":["openid"],"allowsRefreshTokens":true,"createdAt":0}"#
        let decoded = try JSONDecoder().decode(ClientRecord.self, from: Data(client.utf8))
        #expect(decoded.nativeLogin == false)
        #expect(decoded.minimumACR == nil)
        let user = #"{"id":"u","username":"alice","passwordHash":"h","createdAt":0}"#
        #expect(try JSONDecoder().decode(UserRecord.self, from: Data(user.utf8)).locked == false)
    }
}
