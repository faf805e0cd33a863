// DPoP proofs for the backend's requests — RFC 9449 §4.
import Foundation
import SignetCore
import Synchronization

extension RelyingParty {
    /// A DPoP proof for one request with the configured DPoP key — RFC 9449 §4.2: header `typ`
    /// dpop+jwt, `alg` ES256 and the public `jwk`; claims `htm`, `htu`, `iat`, a fresh `jti`, the
    /// provider's latest nonce, and `ath` (the access token's SHA-256) when calling a resource.
    ///
    /// Made by SignetCore's ``DPoPProofMaker``, the same code the app SDK uses.
    func dpopProof(method: String, url: String, accessToken: String? = nil) async throws -> String? {
        guard let key = configuration.dpopKey else { return nil }
        return try await DPoPProofMaker(key: SoftwareDPoPKey(privateKey: key), random: random)
            .proof(method: method, url: url, issuedAt: Date(timeIntervalSince1970: TimeInterval(nowSeconds)), accessToken: accessToken, nonce: dpopNonce.value(for: url))
    }
}

/// The DPoP nonces servers last handed out (RFC 9449 §8, §9), one per origin (the provider and
/// each API have their own): shared by copies of a relying party.
final class DPoPNonceHolder: Sendable {
    private let storage = Mutex<[String: String]>([:])
    /// At most this many origins are remembered; a new one beyond it replaces them all.
    static let maximumOrigins = 64

    func value(for url: String) -> String? { storage.withLock { $0[Self.origin(of: url)] } }

    func set(_ nonce: String?, for url: String) {
        guard let nonce, !nonce.isEmpty, nonce.utf8.count <= 256 else { return }
        let origin = Self.origin(of: url)
        storage.withLock { nonces in
            if nonces[origin] == nil, nonces.count >= Self.maximumOrigins { nonces.removeAll() }
            nonces[origin] = nonce
        }
    }

    /// scheme://host:port, lowercased.
    static func origin(of url: String) -> String {
        guard let components = URLComponents(string: url) else { return url }
        return "\(components.scheme?.lowercased() ?? "")://\(components.host?.lowercased() ?? ""):\(components.port.map(String.init) ?? "")"
    }
}

extension RelyingParty {
    /// Whether `response` (from `url`) asks for the proof again with a fresh nonce (RFC 9449 §8.1,
    /// §9); keeps the nonce it offers for that origin either way.
    func asksForDPoPNonce(_ response: HTTPTransportResponse, from url: String) -> Bool {
        guard configuration.dpopKey != nil, let nonce = response.header("DPoP-Nonce") else { return false }
        dpopNonce.set(nonce, for: url)
        if response.status == 400, let error = try? JSONDecoder().decode(OAuthError.self, from: response.body) { return error.error.rawValue == "use_dpop_nonce" }
        if response.status == 401, let challenge = response.header("WWW-Authenticate") { return Self.bearerError(in: challenge)?.error.rawValue == "use_dpop_nonce" }
        return false
    }
}
