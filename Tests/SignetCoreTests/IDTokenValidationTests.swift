import SignetCore
import Testing

@Suite("ID token claim checks (OIDC Core §3.1.3.7)")
struct IDTokenValidationTests {
    let now = 1_800_000_000
    var claims: IDTokenClaims {
        IDTokenClaims(
            iss: "https://id.example.com", sub: "u1", aud: ["app"], azp: "app", exp: now + 300, iat: now, authTime: now - 10,
            nonce: "n-1", acr: nil, amr: ["pwd"], atHash: nil)
    }
    var expected: IDTokenExpectation { IDTokenExpectation(issuer: "https://id.example.com", clientID: "app", nonce: "n-1", leeway: 0) }

    @Test("valid claims have no failures")
    func valid() { #expect(claims.failures(against: expected, now: now).isEmpty) }

    @Test("each broken claim is named")
    func eachFailure() {
        var c = claims
        c.iss = "https://evil.example.com"
        #expect(c.failures(against: expected, now: now) == [.wrongIssuer])
        c = claims
        c.aud = ["other"]
        c.azp = nil
        #expect(c.failures(against: expected, now: now) == [.wrongAudience])
        c = claims
        c.aud = ["app", "other"]
        c.azp = "other"
        #expect(c.failures(against: expected, now: now) == [.untrustedAudience])
        c = claims
        c.exp = now - 1
        #expect(c.failures(against: expected, now: now) == [.expired])
        c = claims
        c.iat = now + 100
        #expect(c.failures(against: expected, now: now) == [.issuedInFuture])
        c = claims
        c.nonce = "other"
        #expect(c.failures(against: expected, now: now) == [.nonceMismatch])
        c.nonce = nil
        #expect(c.failures(against: expected, now: now) == [.nonceMismatch])
    }

    @Test("max_age needs a recent enough auth_time")
    func maxAge() {
        var expectation = expected
        expectation.maxAge = 5
        #expect(claims.failures(against: expectation, now: now) == [.authTooOld])
        var c = claims
        c.authTime = nil
        #expect(c.failures(against: expectation, now: now) == [.missingAuthTime])
    }
}
