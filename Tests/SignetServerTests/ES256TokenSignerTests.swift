import Crypto
import Foundation
import JWTKit
import SignetCore
@testable import SignetServer
import Testing

/// The provider's own JWS signing (Sources/SignetServer/Keys/ES256TokenSigner.swift), checked
/// against jwt-kit, which verifies the tokens and which it replaced for signing.
@Suite("ES256 token signing without jwt-kit's serializer")
struct ES256TokenSignerTests {
    private struct Claims: JWTPayload, Equatable {
        var sub: String
        var exp: Int
        var aud: [String]
        var note: String
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private let claims = Claims(sub: "user-1", exp: 2_000_000_000, aud: ["https://rp.example/a/b"], note: "ü \"quoted\" </script>")

    private func members(_ segment: Substring) throws -> [String: Any] {
        let json = try #require(Data(base64URLEncoded: String(segment)))
        return try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
    }

    @Test("a token verifies with jwt-kit; its header is alg, kid and typ only; its claims are jwt-kit's own encoding")
    func matchesJWTKit() async throws {
        let key = P256.Signing.PrivateKey()
        let signer = try ES256TokenSigner(kid: "k1", key: key).preparing(type: "at+jwt")
        let token = try signer.sign(claims, type: "at+jwt")
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)

        let header = try members(parts[0])
        #expect(header.count == 3)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "k1")
        #expect(header["typ"] as? String == "at+jwt")
        #expect(try #require(Data(base64URLEncoded: String(parts[2]))).count == 64, "r || s, RFC 7518 section 3.4")

        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(backing: key.publicKey), kid: "k1")
        #expect(try await keys.verify(token, as: Claims.self) == claims)

        // jwt-kit's serializer, with the same key: the claims segment is the same bytes.
        let signingKeys = JWTKeyCollection()
        await signingKeys.add(ecdsa: try ES256PrivateKey(backing: key), kid: "k1")
        let theirs = try await signingKeys.sign(claims, kid: "k1")
        #expect(theirs.split(separator: ".")[1] == parts[1])
    }

    @Test("a token signed with another key, or altered, does not verify; a typ not prepared is refused")
    func refusals() async throws {
        let key = P256.Signing.PrivateKey()
        let signer = try ES256TokenSigner(kid: "k1", key: key).preparing(type: "JWT")
        let token = try signer.sign(claims, type: "JWT")
        let otherKeys = JWTKeyCollection()
        await otherKeys.add(ecdsa: try ES256PublicKey(backing: P256.Signing.PrivateKey().publicKey), kid: "k1")
        await #expect(throws: (any Error).self) { try await otherKeys.verify(token, as: Claims.self) }

        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(backing: key.publicKey), kid: "k1")
        var altered = claims
        altered.sub = "user-2"
        let alteredSegment = try JSONEncoder().encode(altered).base64URLEncodedString()
        let parts = token.split(separator: ".")
        await #expect(throws: (any Error).self) { try await keys.verify("\(parts[0]).\(alteredSegment).\(parts[2])", as: Claims.self) }

        #expect(throws: SignetError.self) { try signer.sign(claims, type: "at+jwt") }
    }
}
