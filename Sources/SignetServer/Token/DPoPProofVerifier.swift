// Checking DPoP proofs — RFC 9449 §4.3.
import Crypto
import Foundation
import Hummingbird
import JWTKit
import SignetCore

/// A verified DPoP proof: the key it was made with.
struct DPoPProof: Sendable, Equatable {
    /// The SHA-256 thumbprint (RFC 7638) of the proof's public key: what tokens are bound to.
    let jkt: String
}

/// Checks the `DPoP` header of a request (RFC 9449 §4.3): one compact JWS with `typ` dpop+jwt,
/// an asymmetric `alg`, a public `jwk` it verifies with, `htm`/`htu` naming this request,
/// a fresh `iat`, a `jti` never seen before (remembered in the store, so instances share it)
/// and, at a resource, `ath` = the hash of the access token presented with it.
struct DPoPProofVerifier: Sendable {
    let replay: any ReplayStore
    let clock: SignetClock
    /// How old (or how far ahead, within `skew`) a proof's `iat` may be.
    let lifetime: TimeInterval
    let skew: TimeInterval
    /// Server-provided nonces, when the provider asks for them (RFC 9449 §8).
    var nonces: DPoPNonces? = nil

    /// Why a proof is refused; the text is safe to send.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        /// The proof lacks a current server nonce: answer `use_dpop_nonce` with this one (RFC 9449 §8).
        var nonce: String? = nil
    }

    /// Members that only a private JWK has (RFC 7517, RFC 7518 §6).
    static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// The proof in `values` (the request's `DPoP` header values), or `nil` when there is none.
    ///
    /// - Parameters:
    ///   - method: the request's method (`htm`).
    ///   - url: the endpoint's URL without query or fragment (`htu`).
    ///   - accessToken: the access token sent with it, at a resource (`ath`).
    func verify(_ values: [String], method: String, url: String, accessToken: String? = nil) async throws -> DPoPProof? {
        guard !values.isEmpty else { return nil }
        guard values.count == 1, let proof = values.first, proof.utf8.count <= 8_192 else { throw Refusal(description: "send exactly one DPoP proof") }
        let jwt: CompactJWT
        switch CompactJWT.parse(proof) {
        case .success(let parsed): jwt = parsed
        case .failure(let refusal): throw Refusal(description: "the DPoP proof is refused: \(refusal)")
        }
        guard jwt.header.typ == "dpop+jwt" else { throw Refusal(description: "the DPoP proof's typ must be dpop+jwt") }
        guard JOSEHeader.acceptedAlgorithms.contains(jwt.header.alg) else { throw Refusal(description: "the DPoP proof's alg is not accepted") }
        guard let header = try? JSONSerialization.jsonObject(with: jwt.headerJSON) as? [String: Any], let jwkObject = header["jwk"] as? [String: Any] else {
            throw Refusal(description: "the DPoP proof has no jwk")
        }
        guard Self.privateMembers.isDisjoint(with: jwkObject.keys) else { throw Refusal(description: "the DPoP proof's jwk must be a public key") }
        guard let jkt = JWKThumbprint.sha256(of: jwkObject) else { throw Refusal(description: "the DPoP proof's jwk is not a usable public key") }

        // The signature, with the key the proof carries.
        do {
            var jwk = try JSONDecoder().decode(JWK.self, from: JSONSerialization.data(withJSONObject: jwkObject))
            jwk.keyIdentifier = JWKIdentifier(string: "dpop")
            if jwk.algorithm == nil { jwk.algorithm = JWK.Algorithm(rawValue: jwt.header.alg) }
            let keys = JWTKeyCollection()
            try await keys.add(jwk: jwk)
            _ = try await keys.verify(proof, as: ClientJWTVerifier.AnyClaims.self)
        } catch {
            throw Refusal(description: "the DPoP proof's signature does not verify with its jwk")
        }

        guard let claims = try? JSONDecoder().decode(DPoPClaims.self, from: jwt.claims) else { throw Refusal(description: "the DPoP proof's claims are malformed") }
        guard claims.htm == method else { throw Refusal(description: "the DPoP proof's htm is not this request's method") }
        guard Self.sameURL(claims.htu, url) else { throw Refusal(description: "the DPoP proof's htu is not this endpoint") }
        let now = clock.now().timeIntervalSince1970
        guard Double(claims.iat) <= now + skew, Double(claims.iat) >= now - lifetime - skew else {
            throw Refusal(description: "the DPoP proof's iat is too old or in the future")
        }
        guard !claims.jti.isEmpty, claims.jti.utf8.count <= 256 else { throw Refusal(description: "the DPoP proof has no jti") }
        if let accessToken {
            let expected = Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString()
            guard let ath = claims.ath, ConstantTime.equals(ath, expected) else { throw Refusal(description: "the DPoP proof's ath does not match the access token") }
        }
        if let nonces {
            guard let nonce = claims.nonce, nonces.isValid(nonce) else {
                throw Refusal(description: "the DPoP proof needs the server's current nonce", nonce: nonces.current())
            }
        }
        let firstUse = try await replay.recordOnce(
            key: "dpop:\(jkt):\(claims.jti)", expiresAt: Date(timeIntervalSince1970: Double(claims.iat) + lifetime + 2 * skew), now: clock.now())
        guard firstUse else { throw Refusal(description: "the DPoP proof's jti was already used") }
        return DPoPProof(jkt: jkt)
    }

    /// The proof `request` carries to an endpoint at `url` (`/token`, `/par`), refusals thrown as
    /// the OAuth errors those endpoints answer with.
    func proof(of request: Request, at url: String) async throws -> DPoPProof? {
        do {
            return try await verify(request.headers[values: .dpop], method: request.method.rawValue, url: url)
        } catch let refusal as Refusal {
            throw refusal.oauthError
        }
    }

    /// `htu` compared as RFC 9449 §4.3 says: without query and fragment, scheme and host case-insensitively.
    static func sameURL(_ htu: String, _ endpoint: String) -> Bool {
        guard var proof = URLComponents(string: htu), let expected = URLComponents(string: endpoint) else { return false }
        proof.query = nil
        proof.fragment = nil
        return proof.scheme?.lowercased() == expected.scheme?.lowercased() && proof.host?.lowercased() == expected.host?.lowercased()
            && (proof.port ?? Self.defaultPort(proof.scheme)) == (expected.port ?? Self.defaultPort(expected.scheme))
            && (proof.path.isEmpty ? "/" : proof.path) == (expected.path.isEmpty ? "/" : expected.path)
    }

    static func defaultPort(_ scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "https": return 443
        case "http": return 80
        default: return nil
        }
    }
}

/// The claims of a DPoP proof — RFC 9449 §4.2.
struct DPoPClaims: Decodable {
    let jti: String
    let htm: String
    let htu: String
    let iat: Int
    let ath: String?
    let nonce: String?
}

extension DPoPProofVerifier.Refusal {
    /// The answer at `/token` and `/par` (RFC 9449 §7.1, §8.1): `use_dpop_nonce` with a fresh
    /// `DPoP-Nonce`, or `invalid_dpop_proof`.
    var oauthError: OAuthHTTPError {
        guard let nonce else { return OAuthHTTPError(.badRequest, .invalidDPoPProof, description) }
        return OAuthHTTPError(.badRequest, .useDPoPNonce, description, headers: [.dpopNonce: nonce])
    }
}
