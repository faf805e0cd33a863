import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Authorization endpoint: request checks")
struct AuthorizationRequestTests {
    @Test("an unknown client gets an error page and no redirect")
    func unknownClient() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            var authorization = TestAuthorization(clientID: "nobody", redirectURI: Fixture.appRedirect)
            authorization.clientID = "nobody"
            let response = try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer))
            #expect(response.status == 400)
            #expect(response.header("Location") == nil)
            #expect(response.body.contains("invalid_client"))
        }
    }

    @Test(
        "redirect URI tricks get an error page and no redirect",
        arguments: [
            "com.example.app:/callback/extra", "com.example.app:/callback?x=1", "com.example.app:/callback#frag", "COM.EXAMPLE.APP:/callback",
            "com.example.app:/Callback", "https://evil.example.com/callback", "http://127.0.0.1:4000/other", "http://user@127.0.0.1:4000/callback",
            "",
        ])
    func redirectTricks(uri: String) async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            var authorization = fixture.appAuthorization
            authorization.redirectURI = uri
            let response = try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer))
            #expect(response.status == 400)
            #expect(response.header("Location") == nil)
        }
    }

    @Test("a loopback redirect on any port is accepted")
    func loopbackPort() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            var authorization = fixture.appAuthorization
            authorization.redirectURI = "http://127.0.0.1:49152/callback"
            let response = try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer))
            #expect(response.status == 200)
            #expect(LoginForm.fields(in: response.body) != nil)
        }
    }

    /// Sends an authorization request and returns the error parameters of its redirect.
    func redirectedError(_ provider: TestProvider, _ authorization: TestAuthorization, extra: [(String, String)] = [], omit: Set<String> = [])
        async throws -> FormParameters?
    {
        let response = try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer, extra: extra, omit: omit))
        #expect(response.status == 302)
        #expect(response.header("Location")?.hasPrefix(authorization.redirectURI + "?") == true)
        return response.locationParameters
    }

    @Test("missing PKCE, plain PKCE and malformed challenges are refused with invalid_request, state and iss")
    func pkceRequired() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.appAuthorization
            for (extra, omit) in [
                ([], Set(["code_challenge", "code_challenge_method"])),
                ([], Set(["code_challenge_method"])),
                ([("code_challenge_method", "plain")], Set(["code_challenge_method"])),
                ([("code_challenge", "short")], Set(["code_challenge"])),
            ] as [([(String, String)], Set<String>)] {
                let error = try #require(try await redirectedError(provider, authorization, extra: extra, omit: omit))
                #expect(error["error"] == "invalid_request")
                #expect(error["state"] == authorization.state)
                #expect(error["iss"] == provider.issuer)
                #expect(error["code"] == nil)
            }
        }
    }

    @Test("other bad requests redirect with the right error code")
    func otherErrors() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.appAuthorization
            let cases: [([(String, String)], Set<String>, String)] = [
                ([("response_type", "token")], ["response_type"], "unsupported_response_type"),
                ([], ["response_type"], "invalid_request"),
                ([("scope", "openid admin")], ["scope"], "invalid_scope"),
                ([("prompt", "none login")], [], "invalid_request"),
                ([("prompt", "bogus")], [], "invalid_request"),
                ([("max_age", "-1")], [], "invalid_request"),
                ([("request_uri", "https://x")], [], "request_uri_not_supported"),
                ([("state", "again")], [], "invalid_request"),
                ([("response_mode", "fragment")], [], "invalid_request"),
                ([("id_token_hint", "not-a-token")], [], "invalid_request"),
            ]
            for (extra, omit, expected) in cases {
                let error = try await redirectedError(provider, authorization, extra: extra, omit: omit)
                #expect(error?["error"] == expected, "for \(extra) without \(omit)")
            }
        }
    }

    @Test("a duplicated client_id or redirect_uri is shown, never redirected")
    func duplicatedTrustParameters() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            for extra in [("client_id", "app"), ("redirect_uri", Fixture.appRedirect)] {
                let response = try await ScriptedBrowser().get(fixture.appAuthorization.url(issuer: provider.issuer, extra: [extra]))
                #expect(response.status == 400)
                #expect(response.header("Location") == nil)
            }
        }
    }

    @Test("a 100 KB parameter is refused without a redirect or a 500")
    func oversizedParameter() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let huge = String(repeating: "x", count: 100_000)
            let query = try await ScriptedBrowser().get(fixture.appAuthorization.url(issuer: provider.issuer, extra: [("login_hint", huge)]))
            #expect((400..<500).contains(query.status))
            let body = try await ScriptedBrowser().post(
                provider.url("/authorize"), form: fixture.appAuthorization.parameters(extra: [("login_hint", huge)]))
            #expect((400..<500).contains(body.status))
            #expect(body.status == 413)
        }
    }

    @Test("POST /authorize with the wrong content type is refused")
    func wrongContentType() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let response = try await ScriptedBrowser().post(
                provider.url("/authorize"), form: fixture.appAuthorization.parameters(), headers: [("Content-Type", "application/json")])
            #expect(response.status == 415)
        }
    }

    @Test("POST /authorize with a form body shows the login page")
    func postForm() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let response = try await ScriptedBrowser().post(provider.url("/authorize"), form: fixture.appAuthorization.parameters())
            #expect(response.status == 200)
            #expect(LoginForm.fields(in: response.body) != nil)
        }
    }

    @Test("prompt=none without a session returns login_required")
    func promptNoneWithoutSession() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let error = try await redirectedError(provider, fixture.appAuthorization, extra: [("prompt", "none")])
            #expect(error?["error"] == "login_required")
        }
    }
}
