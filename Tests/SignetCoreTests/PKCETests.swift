import Foundation
import SignetCore
import Testing

@Suite("PKCE (RFC 7636)")
struct PKCETests {
    @Test("S256 of the RFC 7636 Appendix B verifier is the published challenge")
    func appendixBVector() {
        #expect(PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test("a verifier checks against its own challenge and no other")
    func verifyMatchesOnlyItsChallenge() {
        let verifier = PKCE.makeVerifier()
        #expect(PKCE.verify(verifier: verifier, challenge: PKCE.challenge(for: verifier)))
        #expect(!PKCE.verify(verifier: verifier, challenge: PKCE.challenge(for: PKCE.makeVerifier())))
    }

    @Test("verifiers shorter than 43, longer than 128 or with reserved characters are malformed")
    func malformedVerifiers() {
        #expect(!PKCE.isWellFormedVerifier(String(repeating: "a", count: 42)))
        #expect(PKCE.isWellFormedVerifier(String(repeating: "a", count: 43)))
        #expect(PKCE.isWellFormedVerifier(String(repeating: "a", count: 128)))
        #expect(!PKCE.isWellFormedVerifier(String(repeating: "a", count: 129)))
        #expect(!PKCE.isWellFormedVerifier(String(repeating: "a", count: 42) + "/"))
    }

    @Test("fresh verifiers are 43 characters and never repeat")
    func freshVerifiers() {
        let verifiers = (0..<100).map { _ in PKCE.makeVerifier() }
        #expect(Set(verifiers).count == 100)
        #expect(verifiers.allSatisfy { $0.count == 43 && PKCE.isWellFormedVerifier($0) })
    }

    @Test("constant-time comparison agrees with equality")
    func constantTime() {
        #expect(ConstantTime.equals("abc", "abc"))
        #expect(!ConstantTime.equals("abc", "abd"))
        #expect(!ConstantTime.equals("abc", "abcd"))
    }
}
