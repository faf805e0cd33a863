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
            .proof(method: method, url: url, issuedAt: Date(timeIntervalSince1970: TimeInterval(nowSeconds)), accessToken: accessToken, nonce: dpopNonce.value)
    }
}

/// The DPoP nonce a provider last handed out (RFC 9449 §8): shared by copies of a relying party.
final class DPoPNonceHolder: Sendable {
    private let storage = Mutex<String?>(nil)
    var value: String? { storage.withLock { $0 } }
    func set(_ nonce: String?) {
        guard let nonce, !nonce.isEmpty, nonce.utf8.count <= 256 else { return }
        storage.withLock { $0 = nonce }
    }
}

extension RelyingParty {
    /// Whether `response` asks for the proof again with a fresh nonce (RFC 9449 §8.1, §9); keeps
    /// the nonce it offers either way.
    func asksForDPoPNonce(_ response: HTTPTransportResponse) -> Bool {
        guard configuration.dpopKey != nil, let nonce = response.header("DPoP-Nonce") else { return false }
        dpopNonce.set(nonce)
        if response.status == 400, let error = try? JSONDecoder().decode(OAuthError.self, from: response.body) { return error.error.rawValue == "use_dpop_nonce" }
        if response.status == 401, let challenge = response.header("WWW-Authenticate") { return Self.bearerError(in: challenge)?.error.rawValue == "use_dpop_nonce" }
        return false
    }
}
