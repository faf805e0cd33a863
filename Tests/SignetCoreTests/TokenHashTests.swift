import SignetCore
import Testing

@Suite("at_hash and c_hash (OIDC Core §3.1.3.6)")
struct TokenHashTests {
    @Test("the left half of SHA-256, base64url without padding, against values computed elsewhere")
    func knownAnswers() {
        // python3: base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()[:16]).rstrip(b"=")
        #expect(TokenHash.sha256Half(of: "at-1") == "R8PYaIQdcYEdkSc9TeGyiQ")
        #expect(TokenHash.sha256Half(of: "") == "47DEQpj8HBSa-_TImW-5JA")
        #expect(TokenHash.half(of: "at-1", algorithm: "ES256") == "R8PYaIQdcYEdkSc9TeGyiQ")
    }

    @Test("a long token is hashed whole, not a prefix of it")
    func longTokens() {
        let long = String(repeating: "a", count: 2_000)
        #expect(TokenHash.sha256Half(of: long) != TokenHash.sha256Half(of: long + "b"))
        #expect(TokenHash.sha256Half(of: long) == "xKcA-Ft-nlzb3FEXBAnuKg")
    }
}
