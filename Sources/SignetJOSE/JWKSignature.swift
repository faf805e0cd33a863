// Checking a JWS with one given public JWK.
import Foundation
import JWTKit
import SignetCore
import Synchronization

/// Signature checks with a single key, so jwt-kit can never fall back to another one.
public enum JWKSignature {
    /// Whether `token` is signed with `jwk` (a JSON object) under `alg`, its header's algorithm.
    ///
    /// The key must fit `alg` (``SignetCore/JOSEHeader/algorithms(keyType:curve:)``) and, when it
    /// names an `alg` of its own, name this one (RFC 7517 §4.4); it is then used with `alg` and
    /// nothing else. jwt-kit would otherwise verify with the key's own `alg`, whatever the
    /// header says (RFC 8725 §3.1: one key, one algorithm, the one that was checked).
    public static func verifies(_ token: String, jwk object: [String: Any], alg: String) async -> Bool {
        guard var jwk = try? JSONDecoder().decode(JWK.self, from: JSONSerialization.data(withJSONObject: object)) else { return false }
        return await verifies(token, jwk: &jwk, alg: alg)
    }

    /// Whether `token` is signed with `jwk` under `alg` (see ``verifies(_:jwk:alg:)-(_,[String:Any],_)``).
    public static func verifies(_ token: String, jwk: inout JWK, alg: String) async -> Bool {
        guard JOSEHeader.algorithms(keyType: jwk.keyType.rawValue, curve: jwk.curve?.rawValue).contains(alg) else { return false }
        if let declared = jwk.algorithm, declared.rawValue != alg { return false }
        jwk.algorithm = JWK.Algorithm(rawValue: alg)
        if jwk.keyIdentifier == nil { jwk.keyIdentifier = JWKIdentifier(string: "key") }
        let identity = cacheKey(jwk)
        do {
            let keys: JWTKeyCollection
            if let cached = prepared.withLock({ $0[identity] }) {
                keys = cached
            } else {
                keys = JWTKeyCollection()
                try await keys.add(jwk: jwk)
                prepared.withLock { cache in
                    if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
                    cache[identity] = keys
                }
            }
            _ = try await keys.verify(token, as: AnyJWTClaims.self)
            return true
        } catch {
            return false
        }
    }

    /// Key collections already made from a JWK, by everything that makes the key and its use:
    /// a key that signs again (a client's registered key, an app's DPoP key) is not parsed and
    /// checked again. A key that changes is another entry; the cache is emptied when full.
    private static let prepared = Mutex<[String: JWTKeyCollection]>([:])
    private static let cacheLimit = 1024

    private static func cacheKey(_ jwk: JWK) -> String {
        [jwk.keyType.rawValue, jwk.curve?.rawValue, jwk.x, jwk.y, jwk.modulus, jwk.exponent, jwk.algorithm?.rawValue, jwk.keyIdentifier?.string]
            .map { $0 ?? "" }.joined(separator: "|")
    }
}
