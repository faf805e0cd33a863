// The provider's signing keys, fetched from jwks_uri and cached (OIDC Core §10.1.1).
import Foundation
import JWTKit
import SignetCore
import SignetJOSE

/// The provider's public signing keys, cached with a bounded refetch.
///
/// OIDC Core §10.1.1: a provider rotates keys by publishing a new one in its JWKS and
/// signing with it, so a token naming an unknown `kid` should cause a refetch. That
/// refetch is also what an attacker can provoke with made-up `kid`s, so it is bounded:
/// at most one fetch per ``minimumRefetchInterval``, and concurrent misses share one
/// fetch. Keys are also refetched once older than ``maximumAge``, so withdrawn keys stop
/// being trusted. Until the first fetch succeeds, every lookup tries again (sharing any
/// fetch under way): with no keys at all nothing can be validated anyway.
///
/// Keys marked `use: enc` and keys jwt-kit cannot verify with are left out.
public actor JWKSCache {
    /// One usable verification key from the JWKS.
    public struct Key: Sendable {
        /// The key as the provider published it.
        public let jwk: PublicJWK
        /// One single-key jwt-kit collection per algorithm this key may be used with, so
        /// jwt-kit can never fall back to another key or bind the key to another algorithm.
        let verifiers: [String: JWTKeyCollection]

        /// The JWS algorithms this key verifies — RFC 7518 §3.1.
        public var algorithms: Set<String> { Set(verifiers.keys) }

        /// Whether a token with header `alg` may be checked with this key.
        ///
        /// The algorithm must be the key's own when the JWK names one (RFC 7517 §4.4), and
        /// always fit the key type and curve, so no key is used with an algorithm it was not made for.
        public func accepts(algorithm alg: String) -> Bool { verifiers[alg] != nil }

        /// The algorithms of ``SignetCore/JOSEHeader/acceptedAlgorithms`` that fit `jwk`'s type, curve and `alg`.
        static func algorithms(for jwk: PublicJWK) -> [String] {
            let fitting = JOSEHeader.algorithms(keyType: jwk.kty, curve: jwk.crv).sorted()
            return fitting.filter { JOSEHeader.acceptedAlgorithms.contains($0) && (jwk.alg == nil || jwk.alg == $0) }
        }
    }

    /// The shortest time between two fetches caused by unknown key ids, in seconds.
    public let minimumRefetchInterval: TimeInterval
    /// How long fetched keys are trusted before they are fetched again, in seconds.
    public let maximumAge: TimeInterval

    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date
    private let locate: @Sendable () async throws -> String
    private var keys: [Key] = []
    private var loadedAt: Date?
    private var lastAttempt: Date?
    private var inFlight: Task<[Key], any Error>?

    /// A cache that reads the JWKS from the URL `locate` returns (usually discovery's `jwks_uri`).
    ///
    /// - Parameters:
    ///   - transport: how to fetch the JWKS.
    ///   - minimumRefetchInterval: at most one fetch per this many seconds for unknown `kid`s.
    ///   - maximumAge: refetch keys once they are this many seconds old.
    ///   - now: the clock that measures both.
    ///   - locate: the JWKS URL, looked up when the first fetch happens.
    public init(
        transport: any HTTPTransport,
        minimumRefetchInterval: TimeInterval = 60,
        maximumAge: TimeInterval = 86_400,
        now: @escaping @Sendable () -> Date = Date.init,
        locate: @escaping @Sendable () async throws -> String
    ) {
        self.transport = transport
        self.minimumRefetchInterval = minimumRefetchInterval
        self.maximumAge = maximumAge
        self.now = now
        self.locate = locate
    }

    /// A cache for the JWKS at a known URL.
    public init(
        jwksURI: String,
        transport: any HTTPTransport,
        minimumRefetchInterval: TimeInterval = 60,
        maximumAge: TimeInterval = 86_400,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.init(transport: transport, minimumRefetchInterval: minimumRefetchInterval, maximumAge: maximumAge, now: now) { jwksURI }
    }

    /// The key with id `kid`, refetching the JWKS at most once if it is unknown.
    ///
    /// With `kid == nil` the JWKS must hold exactly one key (OIDC Core §10.1).
    /// Returns `nil` when no such key exists after the refetch, or when a refetch is not
    /// allowed yet. Throws only when fetching fails and no keys were ever loaded.
    public func key(for kid: String?) async throws -> Key? {
        if loadedAt == nil {
            keys = try await fetch()
        } else if let loadedAt, now().timeIntervalSince(loadedAt) >= maximumAge, mayFetch {
            // Stale: try to renew, but keep the old keys if the provider is unreachable.
            if let fresh = try? await fetch() { keys = fresh }
        }
        if let found = lookup(kid) { return found }
        if let inFlight {
            // A fetch is already under way for someone else's miss: share it.
            if let fresh = try? await inFlight.value { keys = fresh }
            return lookup(kid)
        }
        guard mayFetch else { return nil }
        if let fresh = try? await fetch() { keys = fresh }
        return lookup(kid)
    }

    /// The usable keys as last fetched.
    public var currentKeys: [PublicJWK] { keys.map(\.jwk) }

    private var mayFetch: Bool {
        guard let lastAttempt else { return true }
        return now().timeIntervalSince(lastAttempt) >= minimumRefetchInterval
    }

    private func lookup(_ kid: String?) -> Key? {
        guard let kid else { return keys.count == 1 ? keys[0] : nil }
        return keys.first { $0.jwk.kid == kid }
    }

    /// Fetches the JWKS, or joins the fetch already under way.
    private func fetch() async throws -> [Key] {
        if let inFlight { return try await inFlight.value }
        lastAttempt = now()
        let task = Task { [transport, locate] in
            let url = try await locate()
            return try await Self.download(url, through: transport)
        }
        inFlight = task
        defer { inFlight = nil }
        let fresh = try await task.value
        loadedAt = now()
        return fresh
    }

    private static func download(_ url: String, through transport: any HTTPTransport) async throws -> [Key] {
        let request = HTTPTransportRequest(method: "GET", url: url, headers: [("Accept", "application/json")])
        let response = try await RelyingParty.send(request, through: transport)
        guard response.isSuccess else {
            throw SignetError(
                response.status >= 500 ? .transportFailure : .malformedMessage,
                "the JWKS could not be fetched (HTTP \(response.status))")
        }
        guard let set = try? JSONDecoder().decode(LenientKeySet.self, from: response.body) else {
            throw SignetError(.malformedMessage, "the JWKS is not a JSON Web Key Set")
        }
        var keys: [Key] = []
        for case let jwk? in set.keys where jwk.use != "enc" {
            if let key = await makeKey(jwk) { keys.append(key) }
        }
        return keys
    }

    /// A key set whose unreadable members are skipped rather than failing the whole set (RFC 7517 §5).
    private struct LenientKeySet: Decodable {
        var keys: [PublicJWK?]
        private struct Skipped: Decodable {}
        private enum CodingKeys: String, CodingKey { case keys }

        init(from decoder: any Decoder) throws {
            var list = try decoder.container(keyedBy: CodingKeys.self).nestedUnkeyedContainer(forKey: .keys)
            var keys: [PublicJWK?] = []
            while !list.isAtEnd {
                if let key = try? list.decode(PublicJWK.self) {
                    keys.append(key)
                } else {
                    _ = try list.decode(Skipped.self)
                    keys.append(nil)
                }
            }
            self.keys = keys
        }
    }

    /// The verifiers for `jwk`, one per algorithm it fits; `nil` when jwt-kit can use it with none.
    private static func makeKey(_ jwk: PublicJWK) async -> Key? {
        var verifiers: [String: JWTKeyCollection] = [:]
        for name in Key.algorithms(for: jwk) {
            guard let algorithm = JWK.Algorithm(rawValue: name), let converted = convert(jwk, algorithm: algorithm) else { continue }
            let verifier = JWTKeyCollection()
            do {
                try await verifier.add(jwk: converted, isDefault: true)
                // Build the signer now, so a malformed key is left out rather than failing later.
                _ = try await verifier.getKey(for: converted.keyIdentifier, alg: name)
            } catch {
                continue
            }
            verifiers[name] = verifier
        }
        return verifiers.isEmpty ? nil : Key(jwk: jwk, verifiers: verifiers)
    }

    /// `jwk` as jwt-kit's JWK, bound to `algorithm`.
    private static func convert(_ jwk: PublicJWK, algorithm: JWK.Algorithm) -> JWK? {
        let kid = JWKIdentifier(string: jwk.kid ?? "signet-unnamed-key")
        switch jwk.kty {
        case "EC":
            guard let curve = jwk.crv.flatMap(ECDSACurve.init(rawValue:)) else { return nil }
            return .ecdsa(algorithm, identifier: kid, x: jwk.x, y: jwk.y, curve: curve)
        case "RSA":
            return .rsa(algorithm, identifier: kid, modulus: jwk.n, exponent: jwk.e)
        case "OKP":
            guard let curve = jwk.crv.flatMap(EdDSACurve.init(rawValue:)) else { return nil }
            return .octetKeyPair(algorithm, identifier: kid, x: jwk.x, y: nil, curve: curve)
        default:
            return nil  // "oct" and anything else: symmetric or unknown keys never verify ID tokens here.
        }
    }
}

extension JWKSCache {
    /// The keys of the provider at `issuer`, read from the `jwks_uri` of its discovery document
    /// (fetched through `discovery`, shared with whoever else reads the document): how the
    /// relying party and the access-token verifier both find the provider's keys.
    static func discovered(
        issuer: String, discovery: DiscoveryCache, transport: any HTTPTransport, minimumRefetchInterval: TimeInterval, maximumAge: TimeInterval,
        now: @escaping @Sendable () -> Date
    ) -> JWKSCache {
        JWKSCache(transport: transport, minimumRefetchInterval: minimumRefetchInterval, maximumAge: maximumAge, now: now) {
            let document = try await discovery.document { try await RelyingParty.fetchDiscovery(issuer: issuer, transport: transport) }
            return try RelyingParty.checkedEndpoint(document.jwksURI, name: "jwks_uri")
        }
    }
}
