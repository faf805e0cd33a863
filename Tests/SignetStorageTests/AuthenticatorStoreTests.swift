import Foundation
import SignetCore
import SignetServer
import SignetStorage
import SignetStore
import Testing

/// The authenticator store's single-statement rules, on each store.
@Suite("Store contract: authenticators")
struct AuthenticatorStoreTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func authenticator(_ id: String, instance: String = "inst-1", user: String = "u1", keyID: String? = nil, pin: Bool = false, aaid: String? = nil)
        -> AuthenticatorRecord
    {
        AuthenticatorRecord(
            id: id, userID: user, instanceID: instance, clientID: "app", aaid: aaid ?? "aaid-\(id)", keyID: keyID ?? "key-\(id)", publicKey: "pk",
            signatureAlgorithm: 2,
            publicKeyFormat: 0x101, slot: 0, signCounter: 0, registrationCounter: 0, pinKey: pin ? "pin-key" : nil, createdAt: now)
    }

    @Test("20 parallel registrations on one device fill exactly its three slots; a KeyID is unique per user", arguments: StoreBackend.available)
    func slots(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let stored = try await withThrowingTaskGroup(of: AuthenticatorRecord?.self) { group in
                for index in 0..<20 { group.addTask { try await store.insertAuthenticator(authenticator("a\(index)"), maximumPerDevice: 3) } }
                return try await group.reduce(into: [AuthenticatorRecord]()) { if let record = $1 { $0.append(record) } }
            }
            #expect(stored.count == 3)
            #expect(Set(stored.map(\.slot)) == [1, 2, 3])
            #expect(try await store.authenticators(instanceID: "inst-1").map(\.slot) == [1, 2, 3])
            await #expect(throws: SignetError.self) {
                _ = try await store.insertAuthenticator(authenticator("dup", instance: "inst-2", keyID: stored[0].keyID), maximumPerDevice: 3)
            }
            #expect(
                try await store.insertAuthenticator(
                    authenticator("other-user", instance: "inst-3", user: "u2", keyID: stored[0].keyID), maximumPerDevice: 3) != nil)
            let removed = try await store.deleteAuthenticator(id: stored[0].id)
            #expect(removed?.id == stored[0].id)
            #expect(try await store.deleteAuthenticator(id: stored[0].id) == nil)
            #expect(try await store.insertAuthenticator(authenticator("again"), maximumPerDevice: 3)?.slot == stored[0].slot)

            // One authenticator of each AAID per device, under 20 parallel registrations of one.
            let sameAAID = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        (try? await store.insertAuthenticator(authenticator("f\(index)", instance: "inst-9", aaid: "F1D0#1002"), maximumPerDevice: 3))
                            != nil
                    }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(sameAAID == 1)
        }
    }

    @Test("the signature counter must grow unless it is zero; a regression marks the authenticator for good", arguments: StoreBackend.available)
    func counters(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.insertAuthenticator(authenticator("c"), maximumPerDevice: 3)
            #expect(try await store.recordAuthenticatorUse(id: "c", signCounter: 0, at: now) == .accepted)
            #expect(try await store.recordAuthenticatorUse(id: "c", signCounter: 0, at: now) == .accepted, "no counter: zero each time")
            #expect(try await store.recordAuthenticatorUse(id: "c", signCounter: 5, at: now) == .accepted)
            #expect(try await store.recordAuthenticatorUse(id: "c", signCounter: 6, at: now) == .accepted)
            #expect(try await store.recordAuthenticatorUse(id: "c", signCounter: 6, at: now) == .regressed)
            _ = try await store.insertAuthenticator(authenticator("z", instance: "inst-z", keyID: "kz"), maximumPerDevice: 3)
            #expect(try await store.recordAuthenticatorUse(id: "z", signCounter: 3, at: now) == .accepted)
            #expect(
                try await store.recordAuthenticatorUse(id: "z", signCounter: 0, at: now) == .regressed, "a zero cannot reset a counter that started")
            #expect(try await store.authenticator(id: "c")?.cloneSuspectedAt == now)
            #expect(try await store.recordAuthenticatorUse(id: "c", signCounter: 9, at: now) == .regressed, "flagged for good")
            #expect(try await store.recordAuthenticatorUse(id: "gone", signCounter: 1, at: now) == .unknown)
        }
    }

    @Test(
        "PIN failures: 30 parallel wrong proofs are counted two, then the third sets the 60 s cool-down and the rest count nothing",
        arguments: StoreBackend.available)
    func pinFailures(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.insertAuthenticator(authenticator("p", pin: true), maximumPerDevice: 3)
            let schedule: [TimeInterval] = [0, 0, 60, 180]
            let outcomes = try await withThrowingTaskGroup(of: PINFailureOutcome.self) { group in
                for _ in 0..<30 { group.addTask { try await store.recordPINFailure(id: "p", pinKey: "pin-key", at: now, coolDowns: schedule) } }
                return try await group.reduce(into: [PINFailureOutcome]()) { $0.append($1) }
            }
            let counted = outcomes.compactMap { if case .counted(let failures, _) = $0 { failures } else { nil } }
            #expect(counted.sorted() == [1, 2, 3])
            #expect(outcomes.contains(.counted(failures: 3, blockedUntil: now.addingTimeInterval(60))))
            #expect(
                try await store.acceptPIN(id: "p", pinKey: "pin-key", at: now.addingTimeInterval(30), maximumFailures: 5) == false,
                "a right PIN in the cool-down is not accepted")
            #expect(
                try await store.recordPINFailure(id: "p", pinKey: "pin-key", at: now.addingTimeInterval(61), coolDowns: schedule)
                    == .counted(failures: 4, blockedUntil: now.addingTimeInterval(241)))
            #expect(try await store.acceptPIN(id: "p", pinKey: "pin-key", at: now.addingTimeInterval(300), maximumFailures: 5))
            #expect(try await store.authenticator(id: "p")?.pinFailures == 0)
            #expect(try await store.authenticator(id: "p")?.pinBlockedUntil == nil)
            #expect(try await store.replacePINKey(id: "p", from: "pin-key", to: "new"))
            #expect(try await store.replacePINKey(id: "p", from: "pin-key", to: "other") == false, "a second change proved with the old key loses")
            #expect(try await store.authenticator(id: "p")?.pinKey == "new")
            #expect(
                try await store.acceptPIN(id: "p", pinKey: "pin-key", at: now.addingTimeInterval(400), maximumFailures: 5) == false,
                "a proof checked against the old key counts for nothing")
            #expect(
                try await store.recordPINFailure(id: "p", pinKey: "pin-key", at: now.addingTimeInterval(400), coolDowns: schedule)
                    == .coolingDown(until: nil))
        }
    }

    @Test(
        "a device's revocation removes its authenticators, except a reactivation, which moves them to the new instance",
        arguments: StoreBackend.available)
    func revocation(_ backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            for (index, instance) in ["old", "lost"].enumerated() {
                try await store.insertDevice(
                    DeviceRecord(
                        instanceID: instance, clientID: "app", userID: "u1", grantID: "g\(index)", certificateSerial: "0\(index)",
                        certificateThumbprint: "t\(index)",
                        certificateNotAfter: now.addingTimeInterval(86_400), createdAt: now))
                _ = try await store.insertAuthenticator(authenticator("a-\(instance)", instance: instance), maximumPerDevice: 3)
            }
            _ = try await store.revokeDevice(instanceID: "old", reason: .replaced, replacedBy: "new", at: now)
            #expect(try await store.authenticators(instanceID: "new").map(\.id) == ["a-old"])
            #expect(try await store.authenticator(id: "a-old")?.instanceID == "new", "the record names its new device")
            _ = try await store.revokeDevice(instanceID: "lost", reason: .locked, replacedBy: nil, at: now)
            #expect(try await store.authenticators(instanceID: "lost").isEmpty)
            #expect(try await store.authenticators(userID: "u1").map(\.id) == ["a-old"])
        }
    }
}

@Suite("Store readiness")
struct StoreReadinessTests {
    @Test("a migrated store is ready; a closed SQLite store says it does not answer", arguments: StoreBackend.available)
    func readiness(_ backend: StoreBackend) async throws {
        let (store, dispose) = try await backend.makeStore()
        #expect(await store.unreadiness() == nil)
        try await dispose()
        if backend == .sqlite { #expect(await store.unreadiness() == "the database does not answer") }
    }
}
