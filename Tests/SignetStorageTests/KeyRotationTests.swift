import Foundation
import Logging
import SignetCore
import SignetServer
import SignetStorage
import SignetStore
import SignetTesting
import Testing

/// Signing keys rotating by themselves: the step decided from the stored keys, carried out once
/// by one of several instances on one database, seen by all.
@Suite("Key rotation: automatic, once across instances")
struct KeyRotationTests {
    let policy = KeyRotationPolicy(rotationPeriod: 30 * 86_400, announcement: 7 * 86_400)

    /// One provider instance's key machinery over `store`.
    struct Instance {
        let store: any SignetStore
        let ring: KeyRing
        let service: KeyRotationService

        init(_ store: any SignetStore, clock: TestClock, policy: KeyRotationPolicy) {
            self.store = store
            ring = KeyRing(store: store, clock: clock.signetClock, refreshInterval: 60)
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            service = KeyRotationService(
                keys: store, replays: store, clients: store, keyRing: ring, audit: AuditTrail(store: store, clock: clock.signetClock, logger: logger),
                policy: policy, configuration: SignetConfiguration(), clock: clock.signetClock, logger: logger, interval: 3_600)
        }
    }

    /// Two instances on one database: the same store in memory, two connections otherwise.
    func withTwoInstances(_ backend: StoreBackend, clock: TestClock, _ body: (Instance, Instance) async throws -> Void) async throws {
        switch backend {
        case .memory:
            let store = MemoryStore()
            try await body(Instance(store, clock: clock, policy: policy), Instance(store, clock: clock, policy: policy))
        case .sqlite:
            let folder = try TestFolder.make("rotation")
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("signet.sqlite").path
            let first = try await SQLStore.sqlite(path: path)
            let second = try await SQLStore.sqlite(path: path)
            do { try await body(Instance(first, clock: clock, policy: policy), Instance(second, clock: clock, policy: policy)) } catch {
                try? await first.close()
                try? await second.close()
                throw error
            }
            try await first.close()
            try await second.close()
        case .postgres:
            let url = try #require(StoreBackend.postgresURL)
            let schema = StoreBackend.freshSchema()
            let first = try await SQLStore.postgres(url: url, schema: schema)
            let second = try await SQLStore.postgres(url: url, schema: schema)
            do { try await body(Instance(first, clock: clock, policy: policy), Instance(second, clock: clock, policy: policy)) } catch {
                try? await first.close()
                try? await second.close()
                throw error
            }
            try await first.close()
            try await second.close()
        }
    }

    func statuses(_ store: any SignetStore) async throws -> [SigningKeyRecord.Status: [SigningKeyRecord]] {
        Dictionary(grouping: try await store.signingKeys(), by: \.status)
    }

    @Test(
        "two instances that check at once after the rotation period rotate once: the next key signs on both, the old one stays published, a new next key is announced",
        arguments: StoreBackend.available)
    func rotatesOnceAcrossInstances(_ backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withTwoInstances(backend, clock: clock) { a, b in
            try await a.ring.prepare()
            try await b.ring.prepare()
            let before = try await statuses(a.store)
            let (active, next) = (try #require(before[.active]?.first), try #require(before[.next]?.first))
            #expect(before[.active]?.count == 1 && before[.next]?.count == 1)
            let (signingA, signingB) = (await a.ring.activeKeyID, await b.ring.activeKeyID)
            #expect(signingA == active.kid && signingB == active.kid)

            // Not yet: a day before the period ends, neither does anything.
            clock.advance(by: 29 * 86_400)
            #expect(try await a.service.checkOnce() == nil)
            #expect(try await b.service.checkOnce() == nil)

            clock.advance(by: 86_400 + 1)
            async let first = a.service.checkOnce()
            async let second = b.service.checkOnce()
            let outcomes = [try await first, try await second]
            #expect(outcomes.filter { $0 == .rotate(retiring: active.kid, promoting: next.kid) }.count == 1, "\(outcomes)")
            #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")

            let after = try await statuses(a.store)
            #expect(after[.active]?.map(\.kid) == [next.kid])
            #expect(after[.active]?.first?.activatedAt == clock.now)
            #expect(after[.retired]?.map(\.kid) == [active.kid])
            let publishUntil = try #require(after[.retired]?.first?.publishUntil)
            #expect(publishUntil == clock.now.addingTimeInterval(SignetConfiguration().retiredKeyPublicationTime))
            #expect(after[.next]?.count == 1 && after[.next]?.first?.kid != next.kid)

            // Both sign with the new key once they reread; the JWKS has all three.
            try await a.ring.reload()
            try await b.ring.reload()
            let (nowA, nowB) = (await a.ring.activeKeyID, await b.ring.activeKeyID)
            #expect(nowA == next.kid && nowB == next.kid)
            let published = Set(try await b.ring.jwks().keys.compactMap(\.kid))
            #expect(published == Set([active.kid, next.kid, after[.next]!.first!.kid]))

            // Nothing more until the next period; then the retired key has left the JWKS too.
            clock.advance(by: 86_400)
            #expect(try await a.service.checkOnce() == nil)
            #expect(try await b.service.checkOnce() == nil)
            #expect(try await a.store.signingKeys().contains { $0.kid == active.kid } == false, "dropped once its tokens have expired")
        }
    }

    @Test(
        "a rotation waits until the next key has been published for the announcement, however long the active key has signed",
        arguments: StoreBackend.available)
    func waitsForTheAnnouncement(_ backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withTwoInstances(backend, clock: clock) { a, b in
            try await a.ring.prepare()
            // The next key went missing (deleted by hand): the check announces a new one, once.
            let next = try #require(try await a.store.signingKeys().first { $0.status == .next })
            try await a.store.deleteSigningKey(kid: next.kid)
            clock.advance(by: 40 * 86_400)
            async let first = a.service.checkOnce()
            async let second = b.service.checkOnce()
            let outcomes = [try await first, try await second]
            #expect(outcomes.filter { $0 == .announce }.count == 1, "\(outcomes)")
            let announced = try #require(try await a.store.signingKeys().filter { $0.status == .next }.first)
            #expect(try await a.store.signingKeys().filter { $0.status == .next }.count == 1)

            // The active key is long past its period, but the new next key is only just published.
            clock.advance(by: 7 * 86_400 - 1)
            #expect(try await a.service.checkOnce() == nil)
            clock.advance(by: 1)
            let rotated = try await b.service.checkOnce()
            guard case .rotate(_, let promoting) = rotated else {
                Issue.record("expected a rotation, got \(String(describing: rotated))")
                return
            }
            #expect(promoting == announced.kid)
        }
    }

    @Test("the step is decided from the keys alone: none, announce, rotate, repair of two active keys; rotation by hand only when the period is off")
    func steps() {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        func key(_ kid: String, _ status: SigningKeyRecord.Status, created: TimeInterval, activated: TimeInterval? = nil) -> SigningKeyRecord {
            var record = SigningKeyRecord(kid: kid, privateKeyPEM: "", status: status, createdAt: t0.addingTimeInterval(created))
            record.activatedAt = activated.map { t0.addingTimeInterval($0) }
            return record
        }
        let keys = [key("a", .active, created: 0), key("n", .next, created: 0)]
        #expect(KeyRotation.step(keys, now: t0.addingTimeInterval(30 * 86_400 - 1), policy: policy) == .none)
        #expect(KeyRotation.step(keys, now: t0.addingTimeInterval(30 * 86_400), policy: policy) == .rotate(retiring: "a", promoting: "n"))
        #expect(KeyRotation.step(keys, now: t0.addingTimeInterval(999 * 86_400), policy: .manual) == .none)
        #expect(KeyRotation.step([key("a", .active, created: 0)], now: t0, policy: policy) == .announce)
        // Activated later than made: the period counts from the activation.
        let activatedLate = [key("a", .active, created: 0, activated: 20 * 86_400), key("n", .next, created: 20 * 86_400)]
        #expect(KeyRotation.step(activatedLate, now: t0.addingTimeInterval(40 * 86_400), policy: policy) == .none)
        // A rotation stopped halfway: the newer active key keeps signing, the older retires.
        let twoActive = [
            key("old", .active, created: 0), key("new", .active, created: 10, activated: 30 * 86_400), key("n", .next, created: 30 * 86_400),
        ]
        #expect(KeyRotation.step(twoActive, now: t0.addingTimeInterval(30 * 86_400), policy: policy) == .repair(retiring: ["old"]))
    }
}
