import SignetCore
import Testing

@Suite("TokenBinding: one rule for the provider's resources and the kit's verifier (RFC 9449 §7, RFC 8705 §3)")
struct TokenBindingTests {
    let dpop = TokenBinding(dpopThumbprint: "jkt-1", certificateThumbprint: nil)
    let certificate = TokenBinding(dpopThumbprint: nil, certificateThumbprint: "x5t-1")
    let both = TokenBinding(dpopThumbprint: "jkt-1", certificateThumbprint: "x5t-1")
    let bearer = TokenBinding(nil)

    @Test("a DPoP-bound token needs the DPoP scheme and a proof of its own key; the DPoP scheme needs a bound token")
    func dpopBinding() {
        #expect(dpop.refusal(scheme: .bearer, certificate: nil) == .boundTokenAsBearer)
        #expect(dpop.refusal(scheme: .dpop, certificate: nil) == nil)
        #expect(dpop.needsProof && !bearer.needsProof && !certificate.needsProof)
        #expect(dpop.proofMatches("jkt-1") && !dpop.proofMatches("jkt-2") && !dpop.proofMatches(""))
        #expect(!bearer.proofMatches("jkt-1"), "no proof proves an unbound token")
        #expect(bearer.refusal(scheme: .dpop, certificate: nil) == .unboundTokenAsDPoP)
        #expect(bearer.refusal(scheme: .bearer, certificate: nil) == nil)
    }

    @Test("a certificate-bound token needs that certificate, judged before the scheme")
    func certificateBinding() {
        #expect(certificate.refusal(scheme: .bearer, certificate: nil) == .certificateRequired)
        #expect(certificate.refusal(scheme: .bearer, certificate: "x5t-2") == .certificateMismatch)
        #expect(certificate.refusal(scheme: .bearer, certificate: "x5t-1") == nil)
        #expect(certificate.refusal(scheme: .dpop, certificate: "x5t-1") == .unboundTokenAsDPoP)
        #expect(both.refusal(scheme: .bearer, certificate: "x5t-1") == .boundTokenAsBearer)
        #expect(both.refusal(scheme: .dpop, certificate: nil) == .certificateRequired)
        #expect(both.refusal(scheme: .dpop, certificate: "x5t-1") == nil)
    }

    @Test("the binding of a token's cnf")
    func fromConfirmation() {
        #expect(TokenBinding(Confirmation(jkt: "a", x5tS256: "b")) == TokenBinding(dpopThumbprint: "a", certificateThumbprint: "b"))
    }
}
