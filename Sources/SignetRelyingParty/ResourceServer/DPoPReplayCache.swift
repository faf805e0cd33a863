// Remembering DPoP proof identifiers so a proof is used once — RFC 9449 §11.1.
import Crypto
import Foundation

/// Records the `jti` of each accepted DPoP proof until no proof with that `iat` could pass again.
///
/// RFC 9449 §11.1: a resource server should refuse a proof whose `jti` it has seen. One
/// implementation serves one process (``MemoryDPoPReplayCache``); APIs running as many instances
/// put a shared store behind this protocol (a database table with a unique key, or Redis
/// `SET NX PX`), so a proof replayed to another instance is refused too.
public protocol DPoPReplayCache: Sendable {
    /// Records the proof `jti` made with the key `jkt`, remembered until `expiry`, and says
    /// whether this was its first use.
    ///
    /// Must be atomic: of concurrent calls with the same `jkt` and `jti`, exactly one sees
    /// ``DPoPReplayOutcome/firstUse``.
    ///
    /// - Throws: only when the cache cannot be reached (its I/O failed): the proof was not judged.
    func recordFirstUse(jti: String, jkt: String, expiry: Date, now: Date) async throws -> DPoPReplayOutcome
}

/// What a ``DPoPReplayCache`` says about a proof.
public enum DPoPReplayOutcome: Sendable, Equatable {
    /// Not seen before: now recorded.
    case firstUse
    /// Seen before, and not yet forgotten: refuse the proof.
    case replayed
    /// The cache is full of entries still live, so this proof cannot be recorded: refuse it
    /// rather than forget a live entry (which would let that proof be replayed).
    case full
}

/// A bounded in-memory ``DPoPReplayCache`` for one process.
///
/// Entries are keyed by SHA-256 of the key thumbprint and `jti` (32 bytes each, whatever the
/// caller sent) and forgotten after their expiry. At most ``capacity`` entries are kept, so a
/// flood of proofs cannot exhaust memory, and one DPoP key may hold at most ``perKeyLimit`` of
/// them, so one token holder sending valid proofs as fast as they can fills their own share and
/// not the cache: their further proofs are refused (503 `temporarily_unavailable`) while
/// everyone else's are recorded. Forgetting a live entry instead would let that proof be
/// replayed, so nothing live is ever dropped. Expired entries are swept when a limit is reached
/// (at most once per second, so a flood cannot make every request pay for a sweep).
///
/// Size it for the peak number of proofs per proof lifetime: an entry lives the proof lifetime
/// plus twice the skew (180 s with the defaults), so the defaults (400 000 entries, about 40 MB
/// at most; 25 000 per key) hold about 2 000 requests per second in all and 130 per second
/// from one key. Several instances of one API share a store behind ``DPoPReplayCache`` instead.
public actor MemoryDPoPReplayCache: DPoPReplayCache {
    /// The most entries kept at once.
    public nonisolated let capacity: Int
    /// The most entries one DPoP key (`jkt`) may hold at once.
    public nonisolated let perKeyLimit: Int
    private var entries: [Data: (expiry: Date, key: Data)] = [:]
    private var perKey: [Data: Int] = [:]
    private var lastSweep: Date = .distantPast

    /// A cache holding at most `capacity` entries, at most `perKeyLimit` (default a sixteenth) for one key.
    public init(capacity: Int = 400_000, perKeyLimit: Int? = nil) {
        self.capacity = max(1, capacity)
        self.perKeyLimit = max(1, min(perKeyLimit ?? max(1, capacity / 16), self.capacity))
    }

    public func recordFirstUse(jti: String, jkt: String, expiry: Date, now: Date) -> DPoPReplayOutcome {
        let owner = Data(SHA256.hash(data: Data(jkt.utf8)))
        let key = Data(SHA256.hash(data: owner + Data(jti.utf8)))
        if let known = entries[key] {
            if known.expiry > now { return .replayed }
            forget(key)
        }
        if entries.count >= capacity || perKey[owner, default: 0] >= perKeyLimit {
            sweep(now: now)
            guard entries.count < capacity, perKey[owner, default: 0] < perKeyLimit else { return .full }
        }
        entries[key] = (expiry, owner)
        perKey[owner, default: 0] += 1
        return .firstUse
    }

    /// How many entries are kept now, expired ones not yet swept included.
    public var count: Int { entries.count }

    private func forget(_ key: Data) {
        guard let entry = entries.removeValue(forKey: key) else { return }
        let left = perKey[entry.key, default: 1] - 1
        perKey[entry.key] = left > 0 ? left : nil
    }

    /// Drops expired entries, at most once a second.
    private func sweep(now: Date) {
        guard now.timeIntervalSince(lastSweep) >= 1 || now < lastSweep else { return }
        lastSweep = now
        entries = entries.filter { $0.value.expiry > now }
        perKey = entries.values.reduce(into: [:]) { $0[$1.key, default: 0] += 1 }
    }
}
