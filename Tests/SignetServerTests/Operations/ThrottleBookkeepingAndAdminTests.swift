// The outside review of issue 11's work: each finding, fixed, with the check that proves it.
import Foundation
import Logging
import SignetCore
import SignetStore
import SignetTesting
import Testing

@testable import SignetServer

@Suite("Operations: throttle bookkeeping under slow and failed checks, replaced registrations, refused admin changes")
struct ThrottleBookkeepingAndAdminTests {
    /// A login throttle over a fresh memory store, on a clock the test moves.
    private func memoryThrottle(slotWait: Duration = .seconds(60)) -> (LoginThrottle, MemoryStore, TestClock) {
        let clock = TestClock()
        let store = MemoryStore()
        var throttle = LoginThrottle(store: store, policy: ThrottlePolicy(), clock: clock.signetClock)
        throttle.slotWait = slotWait
        return (throttle, store, clock)
    }

    @Test("the account limit holds when checks are slowed down: five checks that never report back still hold their places a minute later")
    func slowChecksKeepTheirSlots() async throws {
        let (throttle, store, clock) = memoryThrottle(slotWait: .milliseconds(200))
        // Five checks reserved and not yet reported back (slowed down past a minute).
        var slow: [LoginThrottle.Reservation] = []
        for index in 0..<5 {
            let reservation = try await throttle.reserve(username: "victim", address: "10.0.0.\(index)")
            #expect(reservation.decision == .allowed)
            slow.append(reservation)
        }
        // A minute later their slots still count: a sixth guess waits for one, and gets none.
        clock.advance(by: 61)
        let sixth = try await throttle.reserve(username: "victim", address: "10.0.1.1").decision
        guard case .paused = sixth else {
            Issue.record("a sixth guess was let through: \(sixth)")
            return
        }
        #expect(await store.liveThrottleSlots(key: LoginThrottle.accountSlotKey("victim"), at: clock.now) == 5)
        // When the five fail, they are counted, and the next guess pauses.
        for reservation in slow { try await throttle.recordFailure(reservation) }
        #expect(await store.throttle(key: LoginThrottle.accountKey("victim"))?.failures == 5)
        #expect(await store.liveThrottleSlots(key: LoginThrottle.accountSlotKey("victim"), at: clock.now) == 0)
        guard case .paused = try await throttle.reserve(username: "victim", address: "10.0.1.2").decision else {
            Issue.record("a guess after five failures was let through")
            return
        }
    }

    @Test("a slot its check never released (the process died) stops counting after its life, even while other checks keep coming")
    func abandonedSlotsExpireUnderTraffic() async throws {
        let (throttle, store, clock) = memoryThrottle(slotWait: .milliseconds(200))
        // Five checks of a busy account die mid-check: their slots are never released.
        for index in 0..<5 {
            #expect(try await throttle.reserve(username: "busy", address: "10.0.0.\(index)").decision == .allowed)
        }
        // Sign-ins keep coming every two minutes (each waits for a slot and is told to pause);
        // under the old counter, each kept the dead checks' count alive for good.
        var elapsed: TimeInterval = 0
        while elapsed + 120 < LoginThrottle.slotLife {
            clock.advance(by: 120)
            elapsed += 120
            guard case .paused = try await throttle.reserve(username: "busy", address: "10.0.1.1").decision else {
                Issue.record("a check got a slot while five dead ones still counted (\(elapsed) s)")
                return
            }
        }
        // Once the dead slots' life has passed, they count no more: the next sign-in goes ahead.
        clock.advance(by: LoginThrottle.slotLife - elapsed + 1)
        #expect(await store.liveThrottleSlots(key: LoginThrottle.accountSlotKey("busy"), at: clock.now) == 0)
        let next = try await throttle.reserve(username: "busy", address: "10.0.1.1")
        #expect(next.decision == .allowed)
        try await throttle.recordSuccess(next)
        #expect(await store.liveThrottleSlots(key: LoginThrottle.accountSlotKey("busy"), at: clock.now) == 0)
        #expect(await store.liveThrottleSlots(key: LoginThrottle.addressSlotKey("10.0.1.1"), at: clock.now) == 0)
    }

    @Test("a check that waits about a minute for the account's slot still holds its address's slot when it runs")
    func addressSlotOutlivesTheWait() async throws {
        let (throttle, store, clock) = memoryThrottle()
        // Five checks hold the account's slots.
        var held: [LoginThrottle.Reservation] = []
        for index in 0..<5 { held.append(try await throttle.reserve(username: "busy", address: "10.0.0.\(index)")) }
        #expect(held.allSatisfy { $0.decision == .allowed })
        // A sixth, from another address, takes that address's slot and waits for the account's.
        let waiting = Task { try await throttle.reserve(username: "busy", address: "10.0.9.9") }
        // Polled for up to 30 s (a slow machine), so a sixth that never takes it fails instead of hanging.
        for _ in 0..<6000 where await store.liveThrottleSlots(key: LoginThrottle.addressSlotKey("10.0.9.9"), at: clock.now) == 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        try #require(await store.liveThrottleSlots(key: LoginThrottle.addressSlotKey("10.0.9.9"), at: clock.now) == 1)
        // A minute and more later, one of the five finishes: the sixth gets its slot and runs.
        clock.advance(by: 70)
        try await throttle.recordSuccess(held.removeFirst())
        let sixth = try await waiting.value
        #expect(sixth.decision == .allowed)
        // Its address's slot, taken before the wait, still counts while its check runs.
        #expect(await store.liveThrottleSlots(key: LoginThrottle.addressSlotKey("10.0.9.9"), at: clock.now) == 1)
        try await throttle.recordSuccess(sixth)
        #expect(await store.liveThrottleSlots(key: LoginThrottle.addressSlotKey("10.0.9.9"), at: clock.now) == 0)
        for reservation in held { try await throttle.recordSuccess(reservation) }
    }

    @Test("a slot taken before the look failed is released; a right password whose reset fails still frees its slots")
    func storeFailuresDoNotStrandSlots() async throws {
        let clock = TestClock()
        let store = FaultyThrottleStore(base: MemoryStore())
        let throttle = LoginThrottle(store: store, policy: ThrottlePolicy(), clock: clock.signetClock)
        // The look fails after the slot was taken: the error reaches the caller, the slot does not stay.
        store.failLook.set(true)
        await #expect(throws: SignetError.self) { try await throttle.reserve(username: "user", address: "10.0.0.1") }
        #expect(await store.base.liveThrottleSlots(key: LoginThrottle.addressSlotKey("10.0.0.1"), at: clock.now) == 0)
        store.failLook.set(false)
        // A failure seen, then a right password whose reset fails: the error is reported, the slots freed.
        try await throttle.recordFailure(try await throttle.reserve(username: "user", address: "10.0.0.2"))
        let right = try await throttle.reserve(username: "user", address: "10.0.0.1")
        #expect(right.accountFailures?.failures == 1)
        store.failReset.set(true)
        await #expect(throws: SignetError.self) { try await throttle.recordSuccess(right) }
        #expect(await store.base.liveThrottleSlots(key: LoginThrottle.accountSlotKey("user"), at: clock.now) == 0)
        #expect(await store.base.liveThrottleSlots(key: LoginThrottle.addressSlotKey("10.0.0.1"), at: clock.now) == 0)
        // The failure stays counted (a higher count, never a lower one).
        #expect(await store.base.throttle(key: LoginThrottle.accountKey("user"))?.failures == 1)
    }

    @Test("a right password signs in even when the throttle's bookkeeping after it fails (it binds nothing), and the slots are freed")
    func rightPasswordSurvivesBookkeepingFailure() async throws {
        let users = MemoryStore()
        let passwords = PasswordHasher(cost: 4)
        try await users.insertUser(UserRecord(id: "u1", username: "user", passwordHash: try await passwords.hash("right"), createdAt: Date()))
        let store = FaultyThrottleStore(base: MemoryStore())
        let clock = TestClock()
        let checker = PasswordChecker(
            users: users, throttle: LoginThrottle(store: store, policy: ThrottlePolicy(), clock: clock.signetClock), passwords: passwords,
            logger: Logger(label: "test"))
        #expect(try await checker.check(username: "user", password: "wrong", address: "10.0.0.1", clientID: "c") == .rejected)
        store.failReset.set(true)
        #expect(
            try await checker.check(username: "user", password: "right", address: "10.0.0.1", clientID: "c")
                == .accepted(userID: "u1", phoneNumber: nil))
        #expect(await store.base.liveThrottleSlots(key: LoginThrottle.accountSlotKey("user"), at: clock.now) == 0)
        #expect(await store.base.throttle(key: LoginThrottle.accountKey("user"))?.failures == 1)
    }

    @Test("a right password clears the name's failures it saw and only those; with none seen it writes nothing, and failures counted meanwhile stay")
    func successClearsOnlyWhatItSaw() async throws {
        let (throttle, store, clock) = memoryThrottle()
        func failure(_ username: String, _ address: String) async throws {
            try await throttle.recordFailure(try await throttle.reserve(username: username, address: address))
        }
        // No failures when reserved: a wrong guess counted meanwhile (another device) is kept.
        let clean = try await throttle.reserve(username: "user", address: "10.0.0.1")
        #expect(clean.decision == .allowed)
        #expect(clean.accountFailures == nil)
        try await failure("user", "10.0.0.2")
        try await throttle.recordSuccess(clean)
        #expect(await store.throttle(key: LoginThrottle.accountKey("user"))?.failures == 1)
        #expect(await store.liveThrottleSlots(key: LoginThrottle.accountSlotKey("user"), at: clock.now) == 0)
        #expect(await store.liveThrottleSlots(key: LoginThrottle.addressSlotKey("10.0.0.1"), at: clock.now) == 0)
        // One failure seen, another counted before the right password reports: that one stays.
        let seen = try await throttle.reserve(username: "user", address: "10.0.0.1")
        #expect(seen.decision == .allowed)
        #expect(seen.accountFailures?.failures == 1)
        clock.advance(by: 1)
        try await failure("user", "10.0.0.3")
        try await throttle.recordSuccess(seen)
        #expect(await store.throttle(key: LoginThrottle.accountKey("user"))?.failures == 2)
        // Nothing counted between: the right password clears what it saw.
        let again = try await throttle.reserve(username: "user", address: "10.0.0.1")
        #expect(again.accountFailures?.failures == 2)
        try await throttle.recordSuccess(again)
        #expect(await store.throttle(key: LoginThrottle.accountKey("user")) == nil)
        #expect(await store.liveThrottleSlots(key: LoginThrottle.accountSlotKey("user"), at: clock.now) == 0)
        // Failures older than the window count as none.
        try await failure("stale", "10.0.0.4")
        clock.advance(by: ThrottlePolicy().window + 1)
        #expect(try await throttle.reserve(username: "stale", address: "10.0.0.4").accountFailures == nil)
    }

    @Test("a replaced registration must state its method and every protection the client has; nothing is dropped by omission")
    func noSilentDowngrade() async throws {
        try await withAdminAPI { provider, api in
            let made = try await api.send(
                "POST", "/admin/clients",
                json:
                    #"{"client_id":"guarded","token_endpoint_auth_method":"none","redirect_uris":["com.example.app:/cb"],"dpop_bound_access_tokens":true,"signet_minimum_acr":"urn:signet:loa:2"}"#
            )
            #expect(made.status == 201, "\(made.body)")
            let before = try await provider.store.client(id: "guarded")
            let noMethod = try await api.send("PUT", "/admin/clients/guarded", json: #"{"redirect_uris":["com.example.app:/cb"]}"#)
            #expect(noMethod.json["error"] as? String == "invalid_client_metadata")
            let dropped = try await api.send(
                "PUT", "/admin/clients/guarded", json: #"{"token_endpoint_auth_method":"none","redirect_uris":["com.example.app:/cb"]}"#)
            #expect(dropped.json["error"] as? String == "invalid_client_metadata")
            #expect((dropped.json["error_description"] as? String)?.contains("dpop_bound_access_tokens") == true)
            #expect(try await provider.store.client(id: "guarded") == before)
            let stated = try await api.send(
                "PUT", "/admin/clients/guarded",
                json:
                    #"{"token_endpoint_auth_method":"none","redirect_uris":["com.example.app:/cb"],"dpop_bound_access_tokens":false,"signet_minimum_acr":"none"}"#
            )
            #expect(stated.status == 200, "\(stated.body)")
            let after = try #require(try await provider.store.client(id: "guarded"))
            #expect(!after.requireDPoP && after.minimumACR == nil)
        }
    }

    @Test("a refused user change changes nothing; user errors are invalid_request; client ids are visible ASCII only")
    func refusedChangesNothing() async throws {
        try await withAdminAPI { provider, api in
            _ = try await provider.admin.addUser(username: "dora", password: "a long password", phoneNumber: "+4511111111")
            let before = try #require(try await provider.store.user(username: "dora"))
            let refused = try await api.send("PATCH", "/admin/users/dora", json: #"{"name":"Changed","phone_number":"+4512345678","password":""}"#)
            #expect(refused.status == 400)
            #expect(refused.json["error"] as? String == "invalid_request")
            #expect(try await provider.store.user(username: "dora") == before)
            let badPhone = try await api.send("PATCH", "/admin/users/dora", json: #"{"phone_number":"+45½2345678"}"#)
            #expect(badPhone.json["error"] as? String == "invalid_request")
            let control = try await api.send(
                "POST", "/admin/clients",
                json: #"{"client_id":"evil\u001b[31m\u0007","token_endpoint_auth_method":"none","redirect_uris":["com.example.app:/cb"]}"#)
            #expect(control.json["error"] as? String == "invalid_client_metadata")
            #expect(try await provider.store.listClients().isEmpty)
        }
    }

    @Test("logout names a client in the trail only when it is a registered one")
    func logoutClient() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (browser, csrf) = try await signedInAtLogoutPage(provider, fixture)
            _ = try await browser.post(provider.url("/logout"), form: [("csrf_token", csrf), ("client_id", "forged\n{\"kind\":\"x\"}\u{1B}[2J")])
            let logout = try #require(try await provider.store.auditEvents(AuditQuery(userID: fixture.user.id)).first { $0.kind == "logout" })
            #expect(logout.clientID == nil)
        }
    }
}

/// A throttle store whose look (after the slot is taken) or reset can be made to fail.
private struct FaultyThrottleStore: ThrottleStore {
    let base: MemoryStore
    let failLook = TestSwitch()
    let failReset = TestSwitch()

    func throttle(key: String) async throws -> ThrottleRecord? { await base.throttle(key: key) }
    func recordFailure(key: String, at: Date, resetBefore: Date) async throws -> ThrottleRecord {
        await base.recordFailure(key: key, at: at, resetBefore: resetBefore)
    }
    func resetThrottle(key: String, unchangedSince seen: ThrottleRecord) async throws {
        if failReset.isOn { throw SignetError(.storageFailure, "the reset failed") }
        await base.resetThrottle(key: key, unchangedSince: seen)
    }
    func takeSlot(_ slot: ThrottleSlot, expiresAt: Date, now: Date, failuresKey: String) async throws -> ThrottleSlotView {
        let view = await base.takeSlot(slot, expiresAt: expiresAt, now: now, failuresKey: failuresKey)
        if failLook.isOn { throw SignetError(.storageFailure, "the look failed") }
        return view
    }
    func releaseSlots(_ slots: [ThrottleSlot]) async throws { await base.releaseSlots(slots) }
}
