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
/// flood of proofs cannot exhaust memory. When the cache is full, expired entries are swept
/// (at most once per second, so a flood cannot make every request pay for a sweep); if it is
/// still full, the new proof is refused with ``DPoPReplayOutcome/full``, and the verifier
/// answers 503 `temporarily_unavailable`. Forgetting a live entry instead would let that
/// proof be replayed. Size it for the peak number of proofs per proof lifetime: the default
/// (100 000 entries, about 10 MB) holds 1 000 requests per second with 60-second proofs and
/// 60-second skew (lifetime plus twice the skew: 180 s of entries per proof).
public actor MemoryDPoPReplayCache: DPoPReplayCache {
    /// The most entries kept at once.
    public let capacity: Int
    private var entries: [Data: Date] = [:]
    private var lastSweep: Date = .distantPast

    /// A cache holding at most `capacity` entries.
    public init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    public func recordFirstUse(jti: String, jkt: String, expiry: Date, now: Date) -> DPoPReplayOutcome {
        let key = Data(SHA256.hash(data: Data((jkt + " " + jti).utf8)))
        if let known = entries[key], known > now { return .replayed }
        if entries[key] == nil, entries.count >= capacity {
            if now.timeIntervalSince(lastSweep) >= 1 || now < lastSweep {
                lastSweep = now
                entries = entries.filter { $0.value > now }
            }
            guard entries.count < capacity else { return .full }
        }
        entries[key] = expiry
        return .firstUse
    }

    /// How many entries are kept now, expired ones not yet swept included.
    public var count: Int { entries.count }
}
