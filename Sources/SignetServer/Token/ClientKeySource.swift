// Where a private_key_jwt client's public keys come from: its registered JWKS or its jwks_uri.
import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import SignetCore

/// Finds the public keys a client signs its assertions with.
public protocol ClientKeySource: Sendable {
    /// The client's key set; throws when it cannot be had.
    ///
    /// - Parameter refresh: fetch again (a `kid` was not found), if the copy is old enough.
    func keySet(for client: ClientRecord, refresh: Bool) async throws -> JWKS
}

/// Reads a client's inline `jwks`, or fetches its `jwks_uri` (cached for five minutes).
public actor RegisteredClientKeys: ClientKeySource {
    private let httpClient: HTTPClient
    private let clock: SignetClock
    private var cache: [String: (keys: JWKS, fetchedAt: Date)] = [:]

    public init(httpClient: HTTPClient = .shared, clock: SignetClock) {
        self.httpClient = httpClient
        self.clock = clock
    }

    /// Fetched key sets are kept this long.
    static let cacheLifetime: TimeInterval = 300
    /// An unknown `kid` refetches at most this often per URI, so forged `kid`s cannot flood the client.
    static let refetchInterval: TimeInterval = 30

    public func keySet(for client: ClientRecord, refresh: Bool) async throws -> JWKS {
        if let jwks = client.jwks {
            return try JSONDecoder().decode(JWKS.self, from: Data(jwks.utf8))
        }
        guard let uri = client.jwksURI else { throw SignetError(.invalidConfiguration, "client has neither jwks nor jwks_uri") }
        if let cached = cache[uri] {
            let age = clock.now().timeIntervalSince(cached.fetchedAt)
            if age < (refresh ? Self.refetchInterval : Self.cacheLifetime) { return cached.keys }
        }
        var request = HTTPClientRequest(url: uri)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await httpClient.execute(request, timeout: .seconds(5))
        guard response.status == .ok else { throw SignetError(.transportFailure, "jwks_uri answered \(response.status.code)") }
        let body = try await response.body.collect(upTo: 256 * 1024)
        let keys = try JSONDecoder().decode(JWKS.self, from: Data(buffer: body))
        cache[uri] = (keys, clock.now())
        return keys
    }
}
