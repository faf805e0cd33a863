import SignetCore
import Testing

@Suite("JWK thumbprints (RFC 7638)")
struct JWKThumbprintTests {
    @Test("the RFC 7638 §3.1 example key has the thumbprint the RFC gives; extra members do not change it")
    func rfcExample() {
        var jwk: [String: Any] = [
            "kty": "RSA", "e": "AQAB",
            "n":
                "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        ]
        #expect(JWKThumbprint.sha256(of: jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        jwk["kid"] = "2011-04-29"
        jwk["alg"] = "RS256"
        #expect(JWKThumbprint.sha256(of: jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    @Test("unknown key types and missing or odd members give no thumbprint")
    func refusals() {
        #expect(JWKThumbprint.sha256(of: ["kty": "oct", "k": "abc"]) == nil)
        #expect(JWKThumbprint.sha256(of: ["kty": "EC", "crv": "P-256", "x": "abc"]) == nil)
        #expect(JWKThumbprint.sha256(of: ["kty": "EC", "crv": "P-256", "x": "a\"b", "y": "c"]) == nil)
    }
}
