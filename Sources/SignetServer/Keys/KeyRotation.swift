// Rotation: a next key is published ahead, then signs; the old key retires and stays published
// until every token it signed has expired.
import Foundation
import SignetCore
import SignetStore

/// When keys rotate by themselves (`keys.rotationDays`, `keys.announceDays`).
public struct KeyRotationPolicy: Sendable, Equatable {
    /// How long a key signs before the next one takes over; `nil`: only by hand (`signet keys rotate`).
    public var rotationPeriod: TimeInterval?
    /// How long a key is published (in the JWKS, as `next`) before it signs, so relying parties
    /// that cache the JWKS know it before they meet a token it signed.
    public var announcement: TimeInterval

    public init(rotationPeriod: TimeInterval? = 90 * 86_400, announcement: TimeInterval = 7 * 86_400) {
        (self.rotationPeriod, self.announcement) = (rotationPeriod, announcement)
    }

    /// By hand only.
    public static let manual = KeyRotationPolicy(rotationPeriod: nil)
}

/// What the keys need now, decided from the stored keys alone (a pure value: ``KeyRotation/step(_:now:policy:)``).
public enum KeyRotationStep: Sendable, Equatable {
    /// Nothing.
    case none
    /// Publish a next key: there is none.
    case announce
    /// The next key `promoting` starts signing and `retiring` retires: the active key has signed
    /// for the rotation period and the next one has been published for the announcement.
    case rotate(retiring: String, promoting: String)
    /// More than one key is active (a rotation stopped halfway): all but the newest retire.
    case repair(retiring: [String])
}

/// Key rotation, by hand (`signet keys rotate`, the admin API) and by ``KeyRotationService``.
///
/// Every instance on one database may decide the same step at the same moment; a rotation is
/// carried out by the one that records it first (``ReplayStore/recordOnce(key:expiresAt:now:)``
/// on the retiring key's id, single use in every store), so the keys rotate once and every
/// instance sees the result at its next reread of the keys.
public enum KeyRotation {
    /// The step `keys` need at `now` under `policy`.
    public static func step(_ keys: [SigningKeyRecord], now: Date, policy: KeyRotationPolicy) -> KeyRotationStep {
        let active = keys.filter { $0.status == .active }.sorted(by: signedSinceEarlier)
        if active.count > 1 { return .repair(retiring: active.dropLast().map(\.kid)) }
        guard let next = keys.filter({ $0.status == .next }).sorted(by: publishedEarlier).first else { return .announce }
        guard let current = active.first, let period = policy.rotationPeriod else { return .none }
        let signingSince = current.activatedAt ?? current.createdAt
        guard now >= signingSince.addingTimeInterval(period), now >= next.createdAt.addingTimeInterval(policy.announcement) else { return .none }
        return .rotate(retiring: current.kid, promoting: next.kid)
    }

    /// Carries out `step`: what changed, or `nil` when another instance carried it out first (or
    /// there was nothing to do).
    ///
    /// - Parameter retiredKeyPublicationTime: how long a retired key stays published (the longest
    ///   token it can have signed, plus the keys' reread interval and clock skew).
    @discardableResult
    public static func apply(
        _ step: KeyRotationStep, keys store: any SigningKeyStore, replays: any ReplayStore, now: Date, retiredKeyPublicationTime: TimeInterval
    ) async throws -> KeyRotationStep? {
        switch step {
        case .none:
            return nil
        case .announce:
            // One next key, whoever notices first; the id of the key now signing names the turn.
            let active = try await store.signingKeys().first { $0.status == .active }?.kid ?? "none"
            guard try await replays.recordOnce(key: "signing-key-announced:" + active, expiresAt: now.addingTimeInterval(400 * 86_400), now: now)
            else { return nil }
            try await store.insertSigningKey(SigningKeyFactory.make(status: .next, now: now))
            return step
        case .rotate(let retiring, let promoting):
            guard try await replays.recordOnce(key: "signing-key-retired:" + retiring, expiresAt: now.addingTimeInterval(400 * 86_400), now: now)
            else { return nil }
            // In this order a rotation stopped halfway leaves two active keys (repaired at the
            // next step, the newer signing meanwhile), never none.
            try await store.insertSigningKey(SigningKeyFactory.make(status: .next, now: now))
            try await store.updateSigningKey(kid: promoting, status: .active, publishUntil: nil, activatedAt: now)
            try await store.updateSigningKey(kid: retiring, status: .retired, publishUntil: now.addingTimeInterval(retiredKeyPublicationTime))
            return step
        case .repair(let retiring):
            for kid in retiring {
                try await store.updateSigningKey(kid: kid, status: .retired, publishUntil: now.addingTimeInterval(retiredKeyPublicationTime))
            }
            return step
        }
    }

    /// Drops retired keys whose tokens have all expired.
    public static func dropExpired(keys store: any SigningKeyStore, now: Date) async throws {
        for key in try await store.signingKeys() where key.status == .retired && (key.publishUntil ?? now) <= now {
            try await store.deleteSigningKey(kid: key.kid)
        }
    }

    /// Rotates now, by hand: promotes the next key (published since the previous rotation) to
    /// active, retires the active key (published until every token it signed has expired),
    /// publishes a new next key, and drops retired keys whose tokens have all expired.
    /// - Returns: the kid now signing.
    @discardableResult
    public static func rotate(keys store: any SigningKeyStore, replays: any ReplayStore, now: Date, retiredKeyPublicationTime: TimeInterval)
        async throws -> String
    {
        try await dropExpired(keys: store, now: now)
        if case .announce = step(try await store.signingKeys(), now: now, policy: .manual) {
            try await store.insertSigningKey(SigningKeyFactory.make(status: .next, now: now))
        }
        let keys = try await store.signingKeys()
        if case .repair = step(keys, now: now, policy: .manual) {
            try await apply(
                step(keys, now: now, policy: .manual), keys: store, replays: replays, now: now, retiredKeyPublicationTime: retiredKeyPublicationTime)
        }
        let current = try await store.signingKeys()
        guard let next = current.filter({ $0.status == .next }).sorted(by: publishedEarlier).first else {
            throw SignetError(.keyFailure, "there is no next signing key to rotate to")
        }
        guard let active = current.first(where: { $0.status == .active }) else {
            // No key signs yet (a store no server has started): the next one starts.
            try await store.insertSigningKey(SigningKeyFactory.make(status: .next, now: now))
            try await store.updateSigningKey(kid: next.kid, status: .active, publishUntil: nil, activatedAt: now)
            return next.kid
        }
        guard
            try await apply(
                .rotate(retiring: active.kid, promoting: next.kid), keys: store, replays: replays, now: now,
                retiredKeyPublicationTime: retiredKeyPublicationTime) != nil
        else { throw SignetError(.conflict, "another rotation of key \(active.kid) came first") }
        return next.kid
    }

    private static func signedSinceEarlier(_ a: SigningKeyRecord, _ b: SigningKeyRecord) -> Bool {
        (a.activatedAt ?? a.createdAt, a.kid) < (b.activatedAt ?? b.createdAt, b.kid)
    }

    private static func publishedEarlier(_ a: SigningKeyRecord, _ b: SigningKeyRecord) -> Bool { (a.createdAt, a.kid) < (b.createdAt, b.kid) }
}
