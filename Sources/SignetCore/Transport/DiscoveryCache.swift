// A provider's metadata (OpenID Connect Discovery 1.0 §4), fetched once and shared.

/// Holds a provider's discovery document once fetched, so it is fetched once per client and its
/// copies: the app SDK's and the relying-party kit's one cache.
///
/// Concurrent first callers share one fetch; a failed fetch is not cached, so the
/// next call tries again.
public actor DiscoveryCache {
    public init() {}

    private var document: DiscoveryDocument?
    private var inFlight: Task<DiscoveryDocument, any Error>?

    /// The cached document, or the result of `fetch` shared by everyone who asks meanwhile.
    public func document(fetch: @escaping @Sendable () async throws -> DiscoveryDocument) async throws -> DiscoveryDocument {
        if let document { return document }
        if let inFlight { return try await inFlight.value }
        let task = Task { try await fetch() }
        inFlight = task
        do {
            let fetched = try await task.value
            document = fetched
            inFlight = nil
            return fetched
        } catch {
            inFlight = nil
            throw error
        }
    }
}
