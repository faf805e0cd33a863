// DPoP proofs and the nonce retry as middleware over HTTPTransport — RFC 9449 §4, §8, §9.
// The app SDK and the relying-party kit both send their proving requests through it.
import Foundation
import Synchronization

/// The `DPoP-Nonce` each server last handed out (RFC 9449 §8 for the provider, §9 for
/// resources), kept per origin, since each server makes its own. Shared by copies of a client.
public final class DPoPNonces: Sendable {
    /// At most this many origins are remembered; a new one beyond it replaces them all, so a
    /// client sent to many hosts cannot be made to grow without bound.
    public static let maximumOrigins = 64
    /// A nonce longer than this is ignored: no server needs one longer, and it is repeated in every proof.
    public static let maximumLength = 256

    private let storage = Mutex<[String: String]>([:])

    public init() {}

    /// The latest nonce from `url`'s origin, if any.
    public func value(for url: String) -> String? { storage.withLock { $0[Self.origin(of: url)] } }

    /// Keeps `nonce` for `url`'s origin; an empty or overlong one is ignored.
    public func keep(_ nonce: String, for url: String) {
        guard Self.isUsable(nonce) else { return }
        let origin = Self.origin(of: url)
        storage.withLock { nonces in
            if nonces[origin] == nil, nonces.count >= Self.maximumOrigins { nonces.removeAll() }
            nonces[origin] = nonce
        }
    }

    /// `scheme://host:port`, lowercased, the default port written out (`https://h` is
    /// `https://h:443`): the key nonces are kept under (RFC 6454 §4).
    public static func origin(of url: String) -> String {
        guard let components = URLComponents(string: url) else { return url }
        let scheme = components.scheme?.lowercased() ?? ""
        let port = components.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\(components.host?.lowercased() ?? ""):\(port)"
    }

    /// Whether `nonce` may be kept and sent: not empty, at most ``maximumLength`` bytes.
    static func isUsable(_ nonce: String) -> Bool { !nonce.isEmpty && nonce.utf8.count <= maximumLength }
}

/// An ``HTTPTransport`` that proves a DPoP key on every request it sends (RFC 9449 §4) and,
/// when the server asks for a nonce, sends the request once more with it.
///
/// The proof names the request's method and URL, carries the origin's latest nonce, and, when
/// the request sends `Authorization: DPoP <token>`, the token's hash (`ath`, §7.1). Any
/// `DPoP` header the request had is replaced. A server asks for a nonce with a `DPoP-Nonce`
/// header and either 400 `use_dpop_nonce` as JSON (the provider, §8) or 401 with a `DPoP`
/// challenge `error="use_dpop_nonce"` (a resource, §9); a nonce is kept from every answer, whatever
/// its status (§8.2). Only requests that should prove the key go through it.
public struct DPoPTransport: HTTPTransport {
    /// Why no proof could be made: the key could not be had or could not sign.
    public struct ProofFailure: Error, Sendable {
        /// What the key or its store threw.
        public let underlying: any Error
    }

    /// Where the requests go once proven.
    public let base: any HTTPTransport
    /// The servers' latest nonces.
    public let nonces: DPoPNonces
    private let key: @Sendable () async throws -> any DPoPSigningKey
    private let random: SecureRandom
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - base: the transport the proven requests go through.
    ///   - key: the DPoP key, asked for at each proof (a hardware key store may be slow the first time).
    ///   - nonces: the nonces, shared by copies of the client.
    ///   - random: the source of each proof's `jti`.
    ///   - now: the clock for each proof's `iat`.
    public init(
        base: any HTTPTransport, key: @escaping @Sendable () async throws -> any DPoPSigningKey, nonces: DPoPNonces, random: SecureRandom,
        now: @escaping @Sendable () -> Date
    ) {
        self.base = base
        self.key = key
        self.nonces = nonces
        self.random = random
        self.now = now
    }

    /// Sends `request` with a proof, once more with the server's nonce when it asks for one.
    ///
    /// - Throws: ``ProofFailure`` when no proof could be made; what `base` throws.
    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        try await send { request }
    }

    /// Sends the request `make` builds, with a proof; when the server asks for a nonce, `make`
    /// builds it anew for the one more try, so single-use parts (a client assertion) are fresh.
    public func send(building make: () async throws -> HTTPTransportRequest) async throws -> HTTPTransportResponse {
        let first = try await make()
        let response = try await base.send(try await proven(first))
        guard asksForNonce(response, from: first.url) else { return response }
        return try await base.send(try await proven(try await make()))
    }

    /// `request` with a fresh proof in its `DPoP` header.
    func proven(_ request: HTTPTransportRequest) async throws -> HTTPTransportRequest {
        var proven = request
        proven.headers.removeAll { $0.name.caseInsensitiveCompare("DPoP") == .orderedSame }
        let proof: String
        do {
            proof = try await DPoPProofMaker(key: try await key(), random: random)
                .proof(
                    method: request.method, url: request.url, issuedAt: now(), accessToken: Self.boundToken(of: request),
                    nonce: nonces.value(for: request.url))
        } catch {
            throw ProofFailure(underlying: error)
        }
        proven.headers.append(("DPoP", proof))
        return proven
    }

    /// The access token of an `Authorization: DPoP <token>` header, for `ath`.
    static func boundToken(of request: HTTPTransportRequest) -> String? {
        guard let authorization = request.header("Authorization"), authorization.count > 5,
            authorization.prefix(5).caseInsensitiveCompare("DPoP ") == .orderedSame
        else { return nil }
        return String(authorization.dropFirst(5))
    }

    /// Keeps the nonce `response` offers and says whether it asks for the request again with it.
    func asksForNonce(_ response: HTTPTransportResponse, from url: String) -> Bool {
        guard let nonce = response.header("DPoP-Nonce"), DPoPNonces.isUsable(nonce) else { return false }
        nonces.keep(nonce, for: url)
        switch response.status {
        case 400: return (try? JSONDecoder().decode(OAuthError.self, from: response.body))?.error == .useDPoPNonce
        case 401:
            return response.headers.contains { header in
                header.name.caseInsensitiveCompare("WWW-Authenticate") == .orderedSame
                    && AuthenticationChallenge(header.value).map {
                        $0.scheme.caseInsensitiveCompare("DPoP") == .orderedSame && $0.oauthError?.error == .useDPoPNonce
                    } == true
            }
        default: return false
        }
    }
}
