// Where a private_key_jwt client's public keys come from: its registered JWKS or its jwks_uri.
import Foundation
import JWTKit
import SignetCore
import SignetStore
import Synchronization

/// Finds the public keys a client signs its assertions with.
public protocol ClientKeySource: Sendable {
    /// The client's key set; throws when it cannot be had.
    ///
    /// - Parameter refresh: fetch again (a `kid` was not found), if the copy is old enough.
    func keySet(for client: ClientRecord, refresh: Bool) async throws -> JWKS
}

/// Reads a client's inline `jwks`, or fetches its `jwks_uri` (cached for five minutes).
///
/// The fetch is a ``SafeFetch``: no redirects, at most 64 KiB, at most 5 s (``FetchLimits``).
/// Anyone can name a client in an assertion before any signature is checked, so fetches are
/// single-flight per URI (concurrent requests share one) and a failure is remembered for
/// ``failureLifetime``: a slow or broken key server cannot be made to cost a fetch per request.
public actor RegisteredClientKeys: ClientKeySource {
    private let fetch: SafeFetch
    private let clock: SignetClock
    private var cache: [String: (keys: JWKS, fetchedAt: Date)] = [:]
    private var failures: [String: (error: SignetError, at: Date)] = [:]
    private var inFlight: [String: Task<JWKS, any Error>] = [:]
    /// Registered key sets decoded, by their text (read outside the actor on every assertion).
    private nonisolated let decodedRegistered = Mutex<[String: JWKS]>([:])

    public init(clock: SignetClock, fetch: SafeFetch = SafeFetch()) {
        self.fetch = fetch
        self.clock = clock
    }

    /// Fetched key sets are kept this long.
    static let cacheLifetime: TimeInterval = 300
    /// An unknown `kid` refetches at most this often per URI, so forged `kid`s cannot flood the client.
    static let refetchInterval: TimeInterval = 30
    /// A failed fetch is answered from memory this long before the URI is tried again.
    static let failureLifetime: TimeInterval = 30

    public nonisolated func keySet(for client: ClientRecord, refresh: Bool) async throws -> JWKS {
        if let jwks = client.jwks { return try registered(jwks) }
        guard let uri = client.jwksURI else { throw SignetError(.invalidConfiguration, "client has neither jwks nor jwks_uri") }
        return try await fetched(uri, refresh: refresh)
    }

    /// A registered key set, decoded once per distinct text: a client whose keys change is a new
    /// entry, and the cache is emptied when full.
    private nonisolated func registered(_ jwks: String) throws -> JWKS {
        if let decoded = decodedRegistered.withLock({ $0[jwks] }) { return decoded }
        let decoded = try JSONDecoder().decode(JWKS.self, from: Data(jwks.utf8))
        decodedRegistered.withLock { cache in
            if cache.count >= 1024 { cache.removeAll(keepingCapacity: true) }
            cache[jwks] = decoded
        }
        return decoded
    }

    private func fetched(_ uri: String, refresh: Bool) async throws -> JWKS {
        let now = clock.now()
        if let cached = cache[uri], now.timeIntervalSince(cached.fetchedAt) < (refresh ? Self.refetchInterval : Self.cacheLifetime) {
            return cached.keys
        }
        if let failed = failures[uri], now.timeIntervalSince(failed.at) < Self.failureLifetime { throw failed.error }
        if let running = inFlight[uri] { return try await running.value }
        let fetch = self.fetch
        let task = Task { try await Self.load(uri, with: fetch) }
        inFlight[uri] = task
        defer { inFlight[uri] = nil }
        do {
            let keys = try await task.value
            cache[uri] = (keys, clock.now())
            failures[uri] = nil
            return keys
        } catch let error as SignetError {
            failures[uri] = (error, clock.now())
            throw error
        }
    }

    private static func load(_ uri: String, with fetch: SafeFetch) async throws -> JWKS {
        let body: Data
        do {
            body = try await fetch.get(uri, accept: "application/json")
        } catch let error as SignetError {
            throw SignetError(error.code, "jwks_uri \(error.reason)")
        }
        guard let keys = try? JSONDecoder().decode(JWKS.self, from: body) else {
            throw SignetError(.malformedMessage, "jwks_uri did not answer a JWK set")
        }
        return keys
    }
}
