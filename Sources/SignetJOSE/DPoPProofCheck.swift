// The stateless checks of a DPoP proof — RFC 9449 §4.3 — shared by the provider and the
// relying-party kit's resource-server verifier.
import Crypto
import Foundation
import SignetCore

/// A DPoP proof whose form, signature and request binding were checked.
///
/// What remains for the caller is what needs state: that `jti` was not seen before (kept
/// until `iat` + the accepted age), and a server nonce when it asks for one.
public struct CheckedDPoPProof: Sendable, Equatable {
    /// The SHA-256 thumbprint (RFC 7638) of the proof's public key: what tokens are bound to.
    public let jkt: String
    /// jti — RFC 9449 §4.2: the proof's identifier, single use.
    public let jti: String
    /// iat — RFC 9449 §4.2, in seconds since 1970.
    public let iat: Int
    /// nonce — RFC 9449 §8: the server nonce the proof carries, if any.
    public let nonce: String?
    /// alg — the JWS algorithm the proof is signed with.
    public let alg: String
}

/// Why a DPoP proof is refused; the text is safe to send in an error description.
public struct DPoPProofRefusal: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Checks a request's `DPoP` header values — RFC 9449 §4.3 items 1–10, less `jti` replay and nonces.
public struct DPoPProofCheck: Sendable {
    /// How old a proof's `iat` may be, in seconds.
    public var lifetime: TimeInterval
    /// How far clocks may disagree, in seconds (a proof may be this far ahead, or this much older).
    public var skew: TimeInterval
    /// The JWS algorithms accepted (asymmetric only).
    public var algorithms: Set<String>
    /// The proofs' keys already made, kept by the owner of this check for the next proof.
    public let keys: JWKSignature

    /// - Parameter keys: the owner's cache of the proofs' keys; keep one check (or one cache) for
    ///   every request, so an app's key is made once.
    public init(
        lifetime: TimeInterval, skew: TimeInterval, algorithms: Set<String> = JOSEHeader.acceptedAlgorithms, keys: JWKSignature = JWKSignature()
    ) {
        self.lifetime = lifetime
        self.skew = skew
        self.algorithms = algorithms
        self.keys = keys
    }

    /// The proof among `values` (the request's `DPoP` header values), or `nil` when there is none.
    ///
    /// - Parameters:
    ///   - method: the request's method (`htm`).
    ///   - url: the endpoint's URL without query or fragment (`htu`).
    ///   - accessToken: the access token sent with it, at a resource (`ath`).
    ///   - now: the current time.
    /// - Throws: ``DPoPProofRefusal`` naming the first check that failed.
    public func check(_ values: [String], method: String, url: String, accessToken: String? = nil, now: Date) async throws -> CheckedDPoPProof? {
        guard !values.isEmpty else { return nil }
        guard values.count == 1, let proof = values.first, proof.utf8.count <= 8_192 else { throw DPoPProofRefusal("send exactly one DPoP proof") }
        let jwt: CompactJWT
        switch CompactJWT.parse(proof) {
        case .success(let parsed): jwt = parsed
        case .failure(let refusal): throw DPoPProofRefusal("the DPoP proof is refused: \(refusal)")
        }
        guard jwt.header.typ == "dpop+jwt" else { throw DPoPProofRefusal("the DPoP proof's typ must be dpop+jwt") }
        guard algorithms.contains(jwt.header.alg) else { throw DPoPProofRefusal("the DPoP proof's alg is not accepted") }
        guard let header = try? JSONSerialization.jsonObject(with: jwt.headerJSON) as? [String: Any], let jwk = header["jwk"] as? [String: Any] else {
            throw DPoPProofRefusal("the DPoP proof has no jwk")
        }
        guard JWKSignature.privateMembers.isDisjoint(with: jwk.keys) else { throw DPoPProofRefusal("the DPoP proof's jwk must be a public key") }
        guard let jkt = JWKThumbprint.sha256(of: jwk) else { throw DPoPProofRefusal("the DPoP proof's jwk is not a usable public key") }
        guard await keys.verifies(jwt, jwk: jwk, alg: jwt.header.alg) else {
            throw DPoPProofRefusal("the DPoP proof's signature does not verify with its jwk")
        }

        guard let claims = try? JSONDecoder().decode(DPoPProofClaims.self, from: jwt.claims) else {
            throw DPoPProofRefusal("the DPoP proof's claims are malformed")
        }
        guard claims.htm == method else { throw DPoPProofRefusal("the DPoP proof's htm is not this request's method") }
        guard !Self.hasQueryOrFragment(claims.htu) else { throw DPoPProofRefusal("the DPoP proof's htu must have no query or fragment") }
        guard Self.sameURL(claims.htu, url) else { throw DPoPProofRefusal("the DPoP proof's htu is not this endpoint") }
        let seconds = now.timeIntervalSince1970
        guard Double(claims.iat) <= seconds + skew, Double(claims.iat) >= seconds - lifetime - skew else {
            throw DPoPProofRefusal("the DPoP proof's iat is too old or in the future")
        }
        guard !claims.jti.isEmpty, claims.jti.utf8.count <= 256 else { throw DPoPProofRefusal("the DPoP proof has no jti") }
        if let accessToken {
            guard let ath = claims.ath, ConstantTime.equals(ath, DPoPProofMaker.accessTokenHash(accessToken)) else {
                throw DPoPProofRefusal("the DPoP proof's ath does not match the access token")
            }
        }
        return CheckedDPoPProof(jkt: jkt, jti: claims.jti, iat: claims.iat, nonce: claims.nonce, alg: jwt.header.alg)
    }

    /// When a proof's `jti` may be forgotten: no proof with that `iat` is accepted any more.
    public func replayHorizon(of proof: CheckedDPoPProof) -> Date {
        Date(timeIntervalSince1970: Double(proof.iat) + lifetime + 2 * skew)
    }

    /// `htu` compared as RFC 9449 §4.3 says: the endpoint without its query and fragment, scheme
    /// and host case-insensitively. An `htu` that carries a query or fragment names no endpoint
    /// (RFC 9449 §4.2 defines it without them).
    public static func sameURL(_ htu: String, _ endpoint: String) -> Bool {
        guard !hasQueryOrFragment(htu), let proof = URLComponents(string: htu), let expected = URLComponents(string: endpoint) else { return false }
        return proof.scheme?.lowercased() == expected.scheme?.lowercased() && proof.host?.lowercased() == expected.host?.lowercased()
            && (proof.port ?? Self.defaultPort(proof.scheme)) == (expected.port ?? Self.defaultPort(expected.scheme))
            && (proof.path.isEmpty ? "/" : proof.path) == (expected.path.isEmpty ? "/" : expected.path)
    }

    /// Whether `htu` has a query or fragment part: in a URI (RFC 3986 §3) `?` and `#` appear
    /// unencoded only as their delimiters, so an empty one (`…/token?`) counts too.
    static func hasQueryOrFragment(_ htu: String) -> Bool {
        htu.utf8.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
    }

    static func defaultPort(_ scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "https": return 443
        case "http": return 80
        default: return nil
        }
    }
}
