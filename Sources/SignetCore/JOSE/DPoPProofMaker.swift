// Making DPoP proofs — RFC 9449 §4.2. Shared by the app SDK and the relying-party kit.
import Crypto
import Foundation

/// A private key that signs DPoP proofs, wherever it lives (memory, a file, the Secure Enclave).
///
/// Only the public half and a signing operation are exposed, so a hardware key can implement
/// it without ever handing out its private bytes. Signing is `async` because a signer may be
/// hardware or remote.
public protocol DPoPSigningKey: Sendable {
    /// alg — RFC 7515 §4.1.1: the JWS algorithm of ``signature(for:)``, e.g. `ES256`.
    var algorithm: String { get }
    /// The public JWK's required members (RFC 7638 §3.2): for a P-256 key `kty`, `crv`, `x`, `y`.
    var publicJWK: [String: String] { get }
    /// The JWS signature of `signingInput` (RFC 7515 §5.1): for ES256 the raw `r ‖ s`, 64 bytes
    /// (RFC 7518 §3.4), not DER.
    func signature(for signingInput: Data) async throws -> Data
}

extension DPoPSigningKey {
    /// jkt — RFC 9449 §6.1: the key's SHA-256 JWK thumbprint (RFC 7638), what tokens are bound to
    /// and what `dpop_jkt` (§10) names.
    public var thumbprint: String {
        // A conforming key's JWK has every required member, so this never falls back.
        JWKThumbprint.sha256(of: publicJWK) ?? ""
    }
}

/// A P-256 DPoP key held in memory (ES256).
public struct SoftwareDPoPKey: DPoPSigningKey {
    public let privateKey: P256.Signing.PrivateKey

    /// A key: the given one, or a fresh one.
    public init(privateKey: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) { self.privateKey = privateKey }

    public var algorithm: String { "ES256" }

    public var publicJWK: [String: String] {
        let jwk = PublicJWK(p256: privateKey.publicKey, kid: "")
        return ["kty": "EC", "crv": "P-256", "x": jwk.x ?? "", "y": jwk.y ?? ""]
    }

    public func signature(for signingInput: Data) async throws -> Data {
        try privateKey.signature(for: signingInput).rawRepresentation
    }
}

/// Makes DPoP proofs with one key — RFC 9449 §4.2.
///
/// A proof is a JWS with header `typ` dpop+jwt, the key's `alg` and its public `jwk`, and the
/// claims `jti` (fresh), `htm`, `htu` (without query and fragment), `iat`, and optionally `ath`
/// (when presenting an access token, §4.2) and `nonce` (when the server gave one, §8).
public struct DPoPProofMaker: Sendable {
    public let key: any DPoPSigningKey
    let random: SecureRandom

    /// - Parameter random: the source of each proof's `jti`.
    public init(key: any DPoPSigningKey, random: SecureRandom = SecureRandom()) {
        self.key = key
        self.random = random
    }

    /// A proof for one request.
    ///
    /// - Parameters:
    ///   - method: htm — the request's HTTP method.
    ///   - url: the request's URL; htu is it without query and fragment (RFC 9449 §4.2).
    ///   - issuedAt: iat — the current time, passed in.
    ///   - accessToken: the access token sent with the request, for `ath` (at a resource, §7).
    ///   - nonce: nonce — the server's latest `DPoP-Nonce` (§8, §9), if it gave one.
    public func proof(method: String, url: String, issuedAt: Date, accessToken: String? = nil, nonce: String? = nil) async throws -> String {
        let header = Header(typ: "dpop+jwt", alg: key.algorithm, jwk: key.publicJWK)
        let claims = DPoPProofClaims(
            jti: random.token(byteCount: 16), htm: method, htu: Self.htu(url), iat: Int(issuedAt.timeIntervalSince1970.rounded(.down)),
            ath: accessToken.map(Self.accessTokenHash), nonce: nonce)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput = try encoder.encode(header).base64URLEncodedString() + "." + encoder.encode(claims).base64URLEncodedString()
        let signature = try await key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + signature.base64URLEncodedString()
    }

    /// htu — RFC 9449 §4.2: the URL without its query and fragment.
    public static func htu(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.query = nil
        components.fragment = nil
        return components.string ?? url
    }

    /// ath — RFC 9449 §4.2: base64url(SHA-256(ASCII access token)).
    public static func accessTokenHash(_ accessToken: String) -> String {
        Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString()
    }

    struct Header: Encodable {
        let typ: String
        let alg: String
        let jwk: [String: String]
    }

}

/// The claims of a DPoP proof — RFC 9449 §4.2: written by ``DPoPProofMaker``, read by the
/// provider's and the resource server's checks.
public struct DPoPProofClaims: Codable, Sendable, Equatable {
    /// jti — a unique identifier of this proof.
    public let jti: String
    /// htm — the request's method.
    public let htm: String
    /// htu — the request's URL without query and fragment.
    public let htu: String
    /// iat — when the proof was made, in seconds since 1970.
    public let iat: Int
    /// ath — base64url(SHA-256(access token)), at a resource.
    public let ath: String?
    /// nonce — the server's nonce (RFC 9449 §8, §9).
    public let nonce: String?

    public init(jti: String, htm: String, htu: String, iat: Int, ath: String?, nonce: String?) {
        self.jti = jti
        self.htm = htm
        self.htu = htu
        self.iat = iat
        self.ath = ath
        self.nonce = nonce
    }
}
