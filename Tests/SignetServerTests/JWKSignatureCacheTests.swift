import Crypto
import Foundation
import SignetCore
import SignetJOSE
import SignetTesting
import Testing

@Suite("Prepared-key cache of JWK signature checks")
struct JWKSignatureCacheTests {
    /// A client-assertion checker's cache of registered keys (each test gets its own).
    let keys = JWKSignature()
    /// A DPoP checker's cache of carried keys: another owner, another instance.
    let carried = JWKSignature()

    /// Checks happen on parsed tokens (``CompactJWT``): one that does not parse never verifies.
    struct Verifier {
        let keys: JWKSignature
        func verifies(_ token: String, jwk: [String: Any], alg: String) async -> Bool {
            guard case .success(let jwt) = CompactJWT.parse(token) else { return false }
            return await keys.verifies(jwt, jwk: jwk, alg: alg)
        }
    }
    private func coordinates(_ key: P256.Signing.PublicKey) -> (x: String, y: String) {
        let raw = key.x963Representation
        return (Data(raw[1..<33]).base64URLEncodedString(), Data(raw[33..<65]).base64URLEncodedString())
    }

    @Test("a JWK with a private member never stands for the public key it shows, and never enters the cache for it")
    func privateMemberRefused() async throws {
        let victim = P256.Signing.PrivateKey(), attacker = P256.Signing.PrivateKey()
        let (x, y) = coordinates(victim.publicKey)
        let forged = try TestJWS.es256(header: ["alg": "ES256", "kid": "v"], claims: ["iss": "c"], key: attacker)
        // jwt-kit would build the key from d alone: the attacker's key behind the victim's x and y.
        let poisoned: [String: Any] = [
            "kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": "v", "d": Data(attacker.rawRepresentation).base64URLEncodedString(),
        ]
        #expect(await Verifier(keys: keys).verifies(forged, jwk: poisoned, alg: "ES256") == false)
        let registered: [String: Any] = ["kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": "v"]
        #expect(await Verifier(keys: keys).verifies(forged, jwk: registered, alg: "ES256") == false)
        // The victim's own signature still verifies with its registered key.
        let genuine = try TestJWS.es256(header: ["alg": "ES256", "kid": "v"], claims: ["iss": "c"], key: victim)
        #expect(await Verifier(keys: keys).verifies(genuine, jwk: registered, alg: "ES256"))
        for member in ["p", "q", "dp", "dq", "qi", "k", "oth"] {
            var withMember = registered
            withMember[member] = "AQAB"
            #expect(await Verifier(keys: keys).verifies(genuine, jwk: withMember, alg: "ES256") == false, "\(member)")
        }
    }

    @Test("a cached key is used only for the algorithm it was checked for, and a second key is not mistaken for the first")
    func cacheKeepsKeysApart() async throws {
        let first = P256.Signing.PrivateKey(), second = P256.Signing.PrivateKey()
        let (x1, y1) = coordinates(first.publicKey)
        let firstJWK: [String: Any] = ["kty": "EC", "crv": "P-256", "x": x1, "y": y1, "kid": "k"]
        let signedByFirst = try TestJWS.es256(header: ["alg": "ES256", "kid": "k"], claims: ["n": 1], key: first)
        let signedBySecond = try TestJWS.es256(header: ["alg": "ES256", "kid": "k"], claims: ["n": 2], key: second)
        #expect(await Verifier(keys: keys).verifies(signedByFirst, jwk: firstJWK, alg: "ES256"))
        // Same kid, the cache warm: the second key's signature still does not verify with the first key.
        #expect(await Verifier(keys: keys).verifies(signedBySecond, jwk: firstJWK, alg: "ES256") == false)
        // An EC key is never used for RS256 or ES384, cached or not.
        #expect(await Verifier(keys: keys).verifies(signedByFirst, jwk: firstJWK, alg: "RS256") == false)
        #expect(await Verifier(keys: keys).verifies(signedByFirst, jwk: firstJWK, alg: "ES384") == false)
        // Another owner's cache (DPoP's carried keys) answers the same, and holds its own keys.
        #expect(await Verifier(keys: carried).verifies(signedByFirst, jwk: firstJWK, alg: "ES256"))
        #expect(await Verifier(keys: carried).verifies(signedBySecond, jwk: firstJWK, alg: "ES256") == false)
    }

    @Test("the ES256 check reads exactly three parts: a genuine signature moved, cut, doubled or padded does not verify")
    func es256TokenShapes() async throws {
        let key = P256.Signing.PrivateKey()
        let (x, y) = coordinates(key.publicKey)
        let jwk: [String: Any] = ["kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": "s"]
        let token = try TestJWS.es256(header: ["alg": "ES256", "kid": "s"], claims: ["n": 3], key: key)
        #expect(await Verifier(keys: keys).verifies(token, jwk: jwk, alg: "ES256"))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let other = try TestJWS.es256(header: ["alg": "ES256", "kid": "s"], claims: ["n": 4], key: key).split(separator: ".").map(String.init)
        let shapes = [
            "\(parts[0]).\(parts[1])",  // no signature part
            "\(parts[0]).\(parts[1]).\(parts[2]).\(parts[2])",  // four parts
            "\(parts[0]).\(parts[1]).\(parts[1]).\(parts[2])",  // a part inserted before the signature
            "\(parts[0]).\(parts[1]).",  // an empty signature
            "\(parts[0]).\(parts[1]).\(parts[2])AA",  // a signature longer than 64 bytes
            "\(parts[0]).\(parts[1]).\(parts[2].dropLast(4))",  // shorter
            "\(parts[0]).\(parts[1]).\(parts[2])=",  // padded
            "\(parts[0]).\(other[1]).\(parts[2])",  // another payload under this signature
            "\(parts[0]).\(parts[1]).\(other[2])",  // another token's signature
            "\(parts[0])\(parts[1]).\(parts[2])",  // the first dot gone
            ".\(parts[0]).\(parts[1]).\(parts[2])",
        ]
        for shape in shapes {
            #expect(await Verifier(keys: keys).verifies(shape, jwk: jwk, alg: "ES256") == false, "\(shape.prefix(40))…")
        }
    }
}
