// Checking a JWS with one given public JWK.
import Crypto
import Foundation
import JWTKit
import SignetCore
import Synchronization

/// Signature checks with a single key, so jwt-kit can never fall back to another one.
///
/// Keys already made from a JWK are kept for their next use (a client's registered key, an
/// app's DPoP key sign again), by everything that makes the key and its use; a key that changes
/// is another entry, and the cache is emptied when full. Each owner keeps its own verifier (the
/// client-assertion checks theirs, the DPoP checks theirs), so that anyone sending proofs with
/// fresh keys cannot push registered keys out.
public final class JWKSignature: Sendable {
    private let prepared = Mutex<[String: PreparedKey]>([:])
    private let capacity: Int

    /// - Parameter capacity: the most keys kept.
    public init(capacity: Int = 1024) { self.capacity = capacity }

    /// Whether `token` is signed with `jwk` (a JSON object) under `alg`, its header's algorithm.
    ///
    /// The key must fit `alg` (``SignetCore/JOSEHeader/algorithms(keyType:curve:)``) and, when it
    /// names an `alg` of its own, name this one (RFC 7517 §4.4); it is then used with `alg` and
    /// nothing else. jwt-kit would otherwise verify with the key's own `alg`, whatever the
    /// header says (RFC 8725 §3.1: one key, one algorithm, the one that was checked).
    public func verifies(_ jwt: CompactJWT, jwk object: [String: Any], alg: String) async -> Bool {
        guard Self.privateMembers.isDisjoint(with: object.keys),
            var jwk = try? JSONDecoder().decode(JWK.self, from: JSONSerialization.data(withJSONObject: object))
        else { return false }
        return await verifies(jwt, jwk: &jwk, alg: alg)
    }

    /// A JWK's private members (RFC 7518 §6.2.2, §6.3.2, §6.4): a public key has none.
    static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Whether `token` is signed with `jwk` under `alg` (see ``verifies(_:jwk:alg:)-(_,[String:Any],_)``).
    ///
    /// A JWK with private members is refused: jwt-kit builds an EC or OKP key from `d` alone,
    /// ignoring `x` and `y`, so such a JWK could stand for another public key than it shows.
    public func verifies(_ jwt: CompactJWT, jwk: inout JWK, alg: String) async -> Bool {
        guard jwk.privateExponent == nil, jwk.prime1 == nil, jwk.prime2 == nil else { return false }
        guard JOSEHeader.algorithms(keyType: jwk.keyType.rawValue, curve: jwk.curve?.rawValue).contains(alg) else { return false }
        if let declared = jwk.algorithm, declared.rawValue != alg { return false }
        jwk.algorithm = JWK.Algorithm(rawValue: alg)
        if jwk.keyIdentifier == nil { jwk.keyIdentifier = JWKIdentifier(string: "key") }
        let identity = Self.cacheKey(jwk)
        do {
            let key: PreparedKey
            if let cached = prepared.withLock({ $0[identity] }) {
                key = cached
            } else {
                key = try await PreparedKey(jwk, alg: alg)
                let capacity = capacity
                prepared.withLock { prepared in
                    if prepared.count >= capacity { prepared.removeAll(keepingCapacity: true) }
                    prepared[identity] = key
                }
            }
            return try await key.verifies(jwt)
        } catch {
            return false
        }
    }

    /// A key ready to check signatures: an ES256 key as swift-crypto's own, any other through jwt-kit.
    enum PreparedKey: Sendable {
        /// ES256 (RFC 7518 §3.4) checked directly: the token's signing input and its 64-byte
        /// `r || s`, with the same swift-crypto call jwt-kit makes. Done by hand because jwt-kit's
        /// `verify` parses the token again, decodes its header and claims with `JSONDecoder` and
        /// goes through its key collection's actor: for the client assertion on every token
        /// request, whose structure ``SignetCore/CompactJWT/parse(_:)`` has already checked.
        case p256(P256.Signing.PublicKey)
        case collection(JWTKeyCollection)

        init(_ jwk: JWK, alg: String) async throws {
            if alg == "ES256", jwk.keyType.rawValue == "EC", jwk.curve?.rawValue == "P-256", let x = jwk.x.flatMap({ Data(base64URLEncoded: $0) }),
                let y = jwk.y.flatMap({ Data(base64URLEncoded: $0) }), x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
            {
                self = .p256(key)
                return
            }
            let keys = JWTKeyCollection()
            try await keys.add(jwk: jwk)
            self = .collection(keys)
        }

        func verifies(_ jwt: CompactJWT) async throws -> Bool {
            switch self {
            case .p256(let key):
                // Over the signing input as the token was split once (``CompactJWT``).
                guard jwt.signature.count == 64 else { return false }
                let signature = try P256.Signing.ECDSASignature(rawRepresentation: jwt.signature)
                return jwt.withSigningInput { key.isValidSignature(signature, for: $0) }
            case .collection(let keys):
                _ = try await keys.verify(jwt.token, as: AnyJWTClaims.self)
                return true
            }
        }
    }

    private static func cacheKey(_ jwk: JWK) -> String {
        [jwk.keyType.rawValue, jwk.curve?.rawValue, jwk.x, jwk.y, jwk.modulus, jwk.exponent, jwk.algorithm?.rawValue, jwk.keyIdentifier?.string]
            .map { $0 ?? "" }.joined(separator: "|")
    }
}
