// The core's DPoP proof maker against the provider's own verifier.
import Crypto
import Foundation
import SignetCore
@testable import SignetServer
import SignetStore
import SignetTesting
import Testing

@Suite("DPoPProofMaker: proofs the provider's verifier accepts")
struct DPoPProofMakerAcceptanceTests {
    func verifier(_ clock: TestClock) -> DPoPProofVerifier {
        DPoPProofVerifier(replay: MemoryStore(), clock: clock.signetClock, lifetime: 60, skew: 30)
    }

    @Test("a proof for /token verifies; its jkt is the key's thumbprint (RFC 7638), and a query in the URL does not matter")
    func tokenProof() async throws {
        let clock = TestClock()
        let key = SoftwareDPoPKey()
        let proof = try await DPoPProofMaker(key: key).proof(method: "POST", url: "https://id.example/token?x=1", issuedAt: clock.now)
        let verified = try await verifier(clock).verify([proof], method: "POST", url: "https://id.example/token")
        #expect(verified?.jkt == key.thumbprint)
        #expect(verified?.jkt == JWKThumbprint.sha256(of: key.publicJWK))
    }

    @Test("a proof at a resource carries ath for the access token; another token, method or URL is refused")
    func resourceProof() async throws {
        let clock = TestClock()
        let maker = DPoPProofMaker(key: SoftwareDPoPKey())
        let check = verifier(clock)
        let proof = try await maker.proof(method: "GET", url: "https://id.example/userinfo", issuedAt: clock.now, accessToken: "token-1")
        #expect(try await check.verify([proof], method: "GET", url: "https://id.example/userinfo", accessToken: "token-1") != nil)
        let other = try await maker.proof(method: "GET", url: "https://id.example/userinfo", issuedAt: clock.now, accessToken: "token-1")
        await #expect(throws: DPoPProofVerifier.Refusal.self) {
            _ = try await check.verify([other], method: "GET", url: "https://id.example/userinfo", accessToken: "token-2")
        }
        let post = try await maker.proof(method: "POST", url: "https://id.example/userinfo", issuedAt: clock.now, accessToken: "token-1")
        await #expect(throws: DPoPProofVerifier.Refusal.self) {
            _ = try await check.verify([post], method: "GET", url: "https://id.example/userinfo", accessToken: "token-1")
        }
        let elsewhere = try await maker.proof(method: "GET", url: "https://id.example/other", issuedAt: clock.now, accessToken: "token-1")
        await #expect(throws: DPoPProofVerifier.Refusal.self) {
            _ = try await check.verify([elsewhere], method: "GET", url: "https://id.example/userinfo", accessToken: "token-1")
        }
    }

    @Test("with server nonces, a proof carrying the current nonce verifies and one without is refused with a nonce to use")
    func nonce() async throws {
        let clock = TestClock()
        let nonces = DPoPNonceIssuer(key: .init(size: .bits256), clock: clock.signetClock, window: 300)
        var check = verifier(clock)
        check.nonces = nonces
        let maker = DPoPProofMaker(key: SoftwareDPoPKey())
        do {
            _ = try await check.verify(
                [try await maker.proof(method: "POST", url: "https://id.example/token", issuedAt: clock.now)], method: "POST",
                url: "https://id.example/token")
            Issue.record("a proof without the nonce must be refused")
        } catch let refusal as DPoPProofVerifier.Refusal {
            #expect(refusal.nonce == nonces.current())
        }
        let withNonce = try await maker.proof(method: "POST", url: "https://id.example/token", issuedAt: clock.now, nonce: nonces.current())
        #expect(try await check.verify([withNonce], method: "POST", url: "https://id.example/token") != nil)
    }
}
