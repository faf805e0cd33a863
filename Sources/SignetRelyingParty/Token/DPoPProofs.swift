// DPoP proofs for the backend's requests — RFC 9449 §4.
import Crypto
import Foundation
import SignetCore
import Synchronization

extension RelyingParty {
    /// A DPoP proof for one request with the configured DPoP key — RFC 9449 §4.2: header `typ`
    /// dpop+jwt, `alg` ES256 and the public `jwk`; claims `htm`, `htu`, `iat`, a fresh `jti`, and
    /// `ath` (the access token's SHA-256) when calling a resource.
    ///
    /// Signed by hand with swift-crypto: ES256's JWS signature is exactly the raw r‖s of a P-256
    /// ECDSA signature (RFC 7518 §3.4), and jwt-kit's header type cannot carry a `jwk` object.
    func dpopProof(method: String, url: String, accessToken: String? = nil) throws -> String? {
        guard let key = configuration.dpopKey else { return nil }
        let jwk = PublicJWK(p256: key.publicKey, kid: "")
        let header: [String: Any] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": ["kty": "EC", "crv": "P-256", "x": jwk.x ?? "", "y": jwk.y ?? ""]]
        var claims: [String: Any] = ["htm": method, "htu": url, "iat": nowSeconds, "jti": random.token()]
        if let nonce = dpopNonce.value { claims["nonce"] = nonce }
        if let accessToken { claims["ath"] = Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString() }
        let encodedHeader = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]).base64URLEncodedString()
        let encodedClaims = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]).base64URLEncodedString()
        let signingInput = encodedHeader + "." + encodedClaims
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + signature.rawRepresentation.base64URLEncodedString()
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
