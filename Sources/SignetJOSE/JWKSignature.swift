// Checking a JWS with one given public JWK.
import Foundation
import JWTKit

/// Signature checks with a single key, so jwt-kit can never fall back to another one.
public enum JWKSignature {
    /// Whether `token` is signed with `jwk` (a JSON object) under the algorithm `alg` of its header.
    ///
    /// The key is bound to `alg` when the JWK names none, so one key is never tried with
    /// several algorithms.
    public static func verifies(_ token: String, jwk object: [String: Any], alg: String) async -> Bool {
        guard var jwk = try? JSONDecoder().decode(JWK.self, from: JSONSerialization.data(withJSONObject: object)) else { return false }
        return await verifies(token, jwk: &jwk, alg: alg)
    }

    /// Whether `token` is signed with `jwk` (see ``verifies(_:jwk:alg:)-(_,[String:Any],_)``).
    public static func verifies(_ token: String, jwk: inout JWK, alg: String) async -> Bool {
        if jwk.keyIdentifier == nil { jwk.keyIdentifier = JWKIdentifier(string: "key") }
        if jwk.algorithm == nil { jwk.algorithm = JWK.Algorithm(rawValue: alg) }
        let keys = JWTKeyCollection()
        do {
            try await keys.add(jwk: jwk)
            _ = try await keys.verify(token, as: AnyJWTClaims.self)
            return true
        } catch {
            return false
        }
    }
}
