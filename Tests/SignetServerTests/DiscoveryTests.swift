import Foundation
import SignetCore
import SignetScript
import SignetTesting
import Testing

@Suite("Discovery and JWKS")
struct DiscoveryTests {
    @Test("discovery lists the endpoints and exactly the supported features")
    func discovery() async throws {
        try await withTestProvider { provider in
            let response = try await ScriptedBrowser().get(provider.url("/.well-known/openid-configuration"))
            #expect(response.status == 200)
            let document = try response.decode(DiscoveryDocument.self)
            #expect(document.issuer == provider.issuer)
            #expect(document.tokenEndpoint == provider.url("/token"))
            #expect(document.responseTypesSupported == ["code"])
            #expect(document.codeChallengeMethodsSupported == ["S256"])
            #expect(document.idTokenSigningAlgValuesSupported == ["ES256"])
            #expect(Set(document.tokenEndpointAuthMethodsSupported) == ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"])
            #expect(document.authorizationResponseIssParameterSupported)
            // Signed request objects (RFC 9101) and pushed requests (RFC 9126); request_uri by reference is not supported.
            #expect(document.requestParameterSupported)
            #expect(Set(document.requestObjectSigningAlgValuesSupported ?? []) == JOSEHeader.acceptedAlgorithms)
            #expect(!(document.requestObjectSigningAlgValuesSupported ?? []).contains { $0.hasPrefix("HS") || $0 == "none" })
            #expect(!document.requestURIParameterSupported)
            #expect(document.pushedAuthorizationRequestEndpoint == provider.url("/par"))
        }
    }

    @Test("the JWKS publishes the active and the next key, public parts only")
    func jwks() async throws {
        try await withTestProvider { provider in
            let response = try await ScriptedBrowser().get(provider.url("/jwks"))
            #expect(response.status == 200)
            let jwks = try response.decode(PublicJWKS.self)
            #expect(jwks.keys.count == 2)
            #expect(jwks.keys.allSatisfy { $0.kty == "EC" && $0.crv == "P-256" && $0.alg == "ES256" && $0.p256PublicKey != nil })
            #expect(!response.body.contains("\"d\""))
        }
    }

    @Test("wrong methods get 405 with Allow")
    func wrongMethod() async throws {
        try await withTestProvider { provider in
            let response = try await ScriptedBrowser().get(provider.url("/token"))
            #expect(response.status == 405)
            #expect(response.header("Allow") == "POST")
            let put = try await ScriptedBrowser().send("PUT", provider.url("/authorize"), body: nil)
            #expect(put.status == 405)
        }
    }
}
