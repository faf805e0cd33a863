import Crypto
import Foundation
import SignetCore
import Testing

@Suite("DPoP proofs made by DPoPProofMaker (RFC 9449 §4.2)")
struct DPoPProofMakerTests {
    func parts(_ proof: String) throws -> (header: [String: Any], claims: [String: Any], jwt: CompactJWT) {
        let jwt = try CompactJWT.parse(proof).get()
        let header = try #require(try JSONSerialization.jsonObject(with: jwt.headerJSON) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: jwt.claims) as? [String: Any])
        return (header, claims, jwt)
    }

    @Test("header typ dpop+jwt, alg ES256 and the public jwk whose thumbprint is the key's; the signature verifies with that jwk")
    func headerAndSignature() async throws {
        let key = SoftwareDPoPKey()
        let proof = try await DPoPProofMaker(key: key).proof(
            method: "POST", url: "https://id.example/token", issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let (header, _, jwt) = try parts(proof)
        #expect(header["typ"] as? String == "dpop+jwt")
        #expect(header["alg"] as? String == "ES256")
        let jwk = try #require(header["jwk"] as? [String: Any])
        #expect(Set(jwk.keys) == ["kty", "crv", "x", "y"], "no private member, nothing extra")
        #expect(JWKThumbprint.sha256(of: jwk) == key.thumbprint)
        #expect(key.thumbprint == JWKThumbprint.sha256(of: ["kty": "EC", "crv": "P-256"].merging(key.publicJWK) { $1 }))
        let publicKey = try #require(
            PublicJWK(kty: "EC", kid: nil, use: nil, alg: nil, crv: "P-256", x: jwk["x"] as? String, y: jwk["y"] as? String).p256PublicKey)
        let signingInput = Data(proof.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        #expect(jwt.signature.count == 64, "raw r‖s, not DER")
        #expect(publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: jwt.signature), for: signingInput))
        #expect(!publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: jwt.signature), for: Data("other".utf8)))
    }

    @Test("claims: htm, htu without query and fragment, iat pinned, a fresh jti; no ath or nonce unless given")
    func claims() async throws {
        let maker = DPoPProofMaker(key: SoftwareDPoPKey())
        let first = try parts(
            try await maker.proof(method: "GET", url: "https://api.example/items?page=2#top", issuedAt: Date(timeIntervalSince1970: 1_700_000_000.9))
        ).claims
        #expect(first["htm"] as? String == "GET")
        #expect(first["htu"] as? String == "https://api.example/items")
        #expect(first["iat"] as? Int == 1_700_000_000)
        #expect(first["ath"] == nil)
        #expect(first["nonce"] == nil)
        let second = try parts(
            try await maker.proof(method: "GET", url: "https://api.example/items", issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
        ).claims
        let jti = try #require(first["jti"] as? String)
        #expect(jti.count >= 22)
        #expect(second["jti"] as? String != jti)
    }

    @Test("ath is base64url(SHA-256(access token)) — the RFC 9449 §7.1 example — and nonce is carried as given")
    func athAndNonce() async throws {
        let token = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
        #expect(DPoPProofMaker.accessTokenHash(token) == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
        let proof = try await DPoPProofMaker(key: SoftwareDPoPKey()).proof(
            method: "GET", url: "https://resource.example.org/protectedresource", issuedAt: Date(), accessToken: token,
            nonce: "eyJ7S_zG.eyJH0-Z.HX4w-7v")
        let claims = try parts(proof).claims
        #expect(claims["ath"] as? String == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
        #expect(claims["nonce"] as? String == "eyJ7S_zG.eyJH0-Z.HX4w-7v")
    }

    @Test("jti comes from the random source passed in")
    func pinnedRandom() async throws {
        let maker = DPoPProofMaker(key: SoftwareDPoPKey(), random: SecureRandom { Array(repeating: 7, count: $0) })
        let claims = try parts(try await maker.proof(method: "POST", url: "https://id.example/token", issuedAt: Date())).claims
        #expect(claims["jti"] as? String == Data(Array(repeating: 7, count: 16)).base64URLEncodedString())
    }
}
