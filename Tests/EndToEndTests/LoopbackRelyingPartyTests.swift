import Foundation
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("One loopback rule: the relying-party kit against a provider on http://127.0.0.2")
struct LoopbackRelyingPartyTests {
    @Test("discovery, the hosted login, the code exchange and the ID token's keys all over plain http on 127.0.0.2; a lookalike host is refused")
    func secondLoopbackAddress() async throws {
        try await withTestProvider(configure: { $0.host = "127.0.0.2" }) { provider in
            #expect(provider.issuer.hasPrefix("http://127.0.0.2:"))
            let key = ClientKeyPair()
            _ = try await provider.admin.addClient(
                SignetAdmin.NewClient(
                    id: "service", name: "Service", authMethod: .privateKeyJWT, redirectURIs: ["http://127.0.0.2/cb"], jwks: key.publicJWKS))
            _ = try await provider.admin.addUser(username: "bob", password: "a long passphrase")
            let clock = provider.clock
            let backend = RelyingParty(
                configuration: RelyingPartyConfiguration(
                    issuer: provider.issuer, clientID: "service", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID)),
                now: { clock.now })
            // A loopback redirect URI on 127.0.0.2 matches on any port (RFC 8252 §7.3).
            let request = try await backend.makeAuthorizationRequest(redirectURI: "http://127.0.0.2:49152/cb", scope: "openid")
            let redirect = try await LoginForm.redirect(for: request.url, username: "bob", password: "a long passphrase")
            #expect(redirect.absoluteString.hasPrefix("http://127.0.0.2:49152/cb?"))
            let completed = try await backend.completeAuthorization(redirect: redirect, pending: request.pending)
            #expect(completed.idToken.sub.isEmpty == false)
        }
        let lookalike = RelyingParty(
            configuration: RelyingPartyConfiguration(issuer: "http://127.0.0.1.evil.example", clientID: "service", clientAuthentication: .none))
        await #expect {
            _ = try await lookalike.discover()
        } throws: { ($0 as? SignetError)?.code == .invalidConfiguration }
    }
}
