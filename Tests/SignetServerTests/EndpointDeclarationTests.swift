import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

/// What follows from declaring an endpoint once: every other method of its path answers 405 with
/// `Allow`, in the path's error dialect.
@Suite("Endpoints declared once: 405 with Allow in each dialect")
struct EndpointDeclarationTests {
    @Test("an OAuth path answers other methods (OPTIONS and HEAD too) with OAuth JSON; a path with a parameter too")
    func oauthDialect() async throws {
        try await withTestProvider { provider in
            for (method, path, allow) in [
                ("OPTIONS", "/token", "POST"), ("GET", "/par", "POST"), ("GET", "/devices/abc", "PATCH, DELETE"),
                ("PUT", "/devices/ca.pem", "GET, HEAD"),
            ] {
                let response = try await ScriptedBrowser().send(method, provider.url(path), body: nil)
                #expect(response.status == 405, "\(method) \(path)")
                #expect(response.header("Allow") == allow, "\(method) \(path)")
                #expect(response.oauthError == "invalid_request", "\(method) \(path)")
            }
            let head = try await ScriptedBrowser().send("HEAD", provider.url("/token"), body: nil)
            #expect(head.status == 405 && head.header("Allow") == "POST" && head.body.isEmpty)
        }
    }

    @Test("the native login API answers a wrong method with 405 and its JSON error shape (error, error_description, retryable)")
    func apiDialect() async throws {
        try await withTestProvider { provider in
            let response = try await ScriptedBrowser().get(provider.url("/login/native/start"))
            #expect(response.status == 405)
            #expect(response.header("Allow") == "POST")
            let body = try response.decode(APIErrorBody.self)
            #expect(body.error == "invalid_request" && body.retryable == false)
            #expect(body.errorDescription?.contains("POST") == true)
        }
    }

    @Test("a page answers a wrong method with 405 and Allow, without a JSON body")
    func pageDialect() async throws {
        try await withTestProvider { provider in
            let response = try await ScriptedBrowser().send("DELETE", provider.url("/logout"), body: nil)
            #expect(response.status == 405)
            #expect(response.header("Allow") == "GET, POST", "a GET that changes state (a sign-out) answers no HEAD")
            #expect(response.oauthError == nil)
        }
    }

    @Test("every GET endpoint answers HEAD as GET without content (RFC 9110 §9.3.2), and its Allow names HEAD")
    func headFollowsGet() async throws {
        try await withTestProvider { provider in
            for path in ["/jwks", "/.well-known/openid-configuration", "/health", "/userinfo", "/devices/ca.pem"] {
                let get = try await ScriptedBrowser().get(provider.url(path))
                let head = try await ScriptedBrowser().send("HEAD", provider.url(path), body: nil)
                #expect(head.status == get.status, "\(path)")
                #expect(head.body.isEmpty, "\(path)")
                #expect(head.header("Content-Type") == get.header("Content-Type"), "\(path)")
            }
            let wrong = try await ScriptedBrowser().send("DELETE", provider.url("/jwks"), body: nil)
            #expect(wrong.status == 405)
            #expect(wrong.header("Allow") == "GET, HEAD")
        }
    }

    @Test("a GET that changes state answers no HEAD: HEAD /authorize spends no pushed request and starts no login, HEAD /logout signs no one out")
    func noHeadForStateChangingGets() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            // A pushed request: HEAD is refused, and the request_uri still opens the login page.
            let authorization = fixture.backendAuthorization
            let pushed = try await browser.post(provider.url("/par"), form: authorization.parameters() + (try fixture.assertion()))
            let uri = try #require(pushed.json["request_uri"] as? String, "\(pushed.body)")
            let url = provider.url("/authorize?") + FormParameters([("client_id", authorization.clientID), ("request_uri", uri)]).encoded
            let head = try await browser.send("HEAD", url, body: nil)
            #expect(head.status == 405 && head.header("Allow") == "GET, POST")
            #expect(head.header("Set-Cookie") == nil, "no login begun")
            let page = try await browser.get(url)
            #expect(page.status == 200 && LoginForm.fields(in: page.body) != nil, "the request_uri was not spent")
            // Signed in: HEAD /logout leaves the session, which still answers prompt=none.
            let signedIn = ScriptedBrowser()
            let tokens = try await fixture.backendTokens(browser: signedIn).1.decode(TokenResponse.self)
            let logout = provider.url("/logout?") + FormParameters([("id_token_hint", try #require(tokens.idToken))]).encoded
            let headLogout = try await signedIn.send("HEAD", logout, body: nil)
            #expect(headLogout.status == 405)
            let silent = try await signedIn.get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("prompt", "none")]))
            #expect(silent.locationParameters?["code"] != nil, "still signed in")
        }
    }
}
