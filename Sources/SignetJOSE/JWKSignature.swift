// Checking a JWS with one given public JWK.
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
            return try key.verifies(jwt)
        } catch {
            return false
        }
    }

    /// A key made once from a JWK by jwt-kit, for the one algorithm it was checked for, whatever
    /// the algorithm. It checks the signature over the signing input of a token already split
    /// (``SignetCore/CompactJWT``) with jwt-kit's `verify(_:signs:)`, so the token is not parsed
    /// again, its header and claims are not decoded again, and no actor is crossed per check.
    struct PreparedKey: Sendable {
        let algorithm: any JWTAlgorithm

        init(_ jwk: JWK, alg: String) async throws {
            let keys = JWTKeyCollection()
            try await keys.add(jwk: jwk)
            algorithm = try await keys.getKey(for: jwk.keyIdentifier, alg: alg)
        }

        func verifies(_ jwt: CompactJWT) throws -> Bool {
            try jwt.withSigningInput { try algorithm.verify(jwt.signature, signs: $0) }
        }
    }

    private static func cacheKey(_ jwk: JWK) -> String {
        [jwk.keyType.rawValue, jwk.curve?.rawValue, jwk.x, jwk.y, jwk.modulus, jwk.exponent, jwk.algorithm?.rawValue, jwk.keyIdentifier?.string]
            .map { $0 ?? "" }.joined(separator: "|")
    }
}
