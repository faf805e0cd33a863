// The Authorization header at the provider's own resources, read as the kit's verifier reads it.
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Own resources: the Authorization header (RFC 6750 §2.1, RFC 7235 §2.1)")
struct UserInfoCredentialsTests {
    @Test(
        "two Authorization headers, another scheme, a scheme without token or a token that is no token68 are 400 invalid_request; the token still works alone"
    )
    func headerRules() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (_, response) = try await fixture.backendTokens()
            let token = try response.decode(TokenResponse.self).accessToken
            let userinfo = provider.url("/userinfo")
            for headers in [
                [("Authorization", "Bearer \(token)"), ("Authorization", "Bearer \(token)")],
                [("Authorization", "Basic \(token)")],
                [("Authorization", "Bearer ")],
                [("Authorization", "Bearer \(token) extra")],
            ] {
                let refused = try await ScriptedBrowser().get(userinfo, headers: headers)
                #expect(refused.status == 400, "\(headers.map(\.1).joined(separator: " | ").prefix(40))")
                #expect(refused.oauthError == "invalid_request")
            }
            #expect(try await ScriptedBrowser().get(userinfo, headers: [("Authorization", "Bearer \(token)")]).status == 200)
        }
    }
}
