import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Hosted login page")
struct LoginPageTests {
    @Test("the page forbids framing and caching, and binds the form to the browser with an HttpOnly SameSite cookie")
    func pageHeaders() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let response = try await ScriptedBrowser().get(fixture.appAuthorization.url(issuer: provider.issuer))
            #expect(response.status == 200)
            let csp = try #require(response.header("Content-Security-Policy"))
            #expect(csp.contains("frame-ancestors 'none'"))
            #expect(csp.contains("default-src 'none'"))
            #expect(csp.contains("form-action 'self' com.example.app:"))
            #expect(response.header("X-Frame-Options") == "DENY")
            #expect(response.header("Cache-Control") == "no-store")
            let cookie = try #require(response.headers("Set-Cookie").first { $0.hasPrefix("signet_browser=") })
            #expect(cookie.contains("HttpOnly"))
            #expect(cookie.contains("SameSite=Lax"))
            #expect(!cookie.contains("Secure"))
            #expect(response.body.contains("Example App"))
        }
    }

    @Test("login_hint pre-fills the username, escaped")
    func loginHint() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let response = try await ScriptedBrowser().get(
                fixture.appAuthorization.url(issuer: provider.issuer, extra: [("login_hint", "<b>alice</b>")]))
            #expect(response.body.contains("&lt;b&gt;alice&lt;/b&gt;"))
            #expect(!response.body.contains("<b>alice</b>"))
        }
    }

    @Test("a login_hint cannot end the username's attribute: a quote is escaped even when a combining mark follows it")
    func loginHintQuoteWithCombiningMark() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let hint = "a\"\u{301} autofocus x=\"\u{301}"
            let response = try await ScriptedBrowser().get(fixture.appAuthorization.url(issuer: provider.issuer, extra: [("login_hint", hint)]))
            #expect(response.status == 200)
            // Built outside the expectations: a quote and a combining mark in one literal trip the macro.
            let escaped = "value=" + "\"" + "a&quot;\u{301} autofocus x=&quot;\u{301}" + "\""
            let rawQuoteWithMark = "\"" + "\u{301}"
            #expect(response.body.contains(escaped))
            #expect(!response.body.contains(rawQuoteWithMark))
        }
    }

    @Test("a right password redirects with code, state and iss, and sets an HttpOnly SameSite session cookie")
    func success() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.appAuthorization
            let browser = ScriptedBrowser()
            let response = try await provider.submitLogin(authorization, browser: browser, username: "Alice", password: Fixture.password)
            #expect(response.status == 303)
            let parameters = try #require(response.locationParameters)
            #expect(parameters["code"] != nil)
            #expect(parameters["state"] == authorization.state)
            #expect(parameters["iss"] == provider.issuer)
            let cookie = try #require(response.headers("Set-Cookie").first { $0.hasPrefix("signet_session=") })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"))
        }
    }

    @Test("a wrong password and an unknown user get the same generic 401 answer")
    func genericFailure() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let wrong = try await provider.submitLogin(fixture.appAuthorization, browser: ScriptedBrowser(), username: "alice", password: "nope")
            let unknown = try await provider.submitLogin(fixture.appAuthorization, browser: ScriptedBrowser(), username: "mallory", password: "nope")
            #expect(wrong.status == 401)
            #expect(unknown.status == 401)
            #expect(wrong.body.contains("The username or password is incorrect."))
            #expect(unknown.body.contains("The username or password is incorrect."))
            #expect(wrong.header("Location") == nil)
        }
    }

    @Test("a form without the CSRF token, with a wrong one, or from another browser is refused with 403")
    func csrf() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            let page = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer))
            let fields = try #require(LoginForm.fields(in: page.body))
            let credentials = [("username", "alice"), ("password", Fixture.password)]
            let missing = try await browser.post(provider.url("/login"), form: [("authorization", fields.authorization)] + credentials)
            #expect(missing.status == 403)
            let wrong = try await browser.post(
                provider.url("/login"), form: [("authorization", fields.authorization), ("csrf_token", "x")] + credentials)
            #expect(wrong.status == 403)
            let otherBrowser = try await ScriptedBrowser().post(
                provider.url("/login"), form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken)] + credentials)
            #expect(otherBrowser.status == 403)
            // The genuine form still works afterwards: refusals changed nothing.
            let genuine = try await browser.post(
                provider.url("/login"), form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken)] + credentials)
            #expect(genuine.status == 303)
        }
    }

    @Test("a completed form cannot be submitted again")
    func singleUse() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            let page = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer))
            let fields = try #require(LoginForm.fields(in: page.body))
            let form = [
                ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "alice"), ("password", Fixture.password),
            ]
            #expect(try await browser.post(provider.url("/login"), form: form).status == 303)
            let again = try await browser.post(provider.url("/login"), form: form)
            #expect(again.status == 400)
            #expect(again.header("Location") == nil)
        }
    }

    @Test("an expired login page is refused")
    func expiredPage() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            let page = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer))
            let fields = try #require(LoginForm.fields(in: page.body))
            provider.clock.advance(by: 601)
            let response = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "alice"), ("password", Fixture.password),
                ])
            #expect(response.status == 400)
            #expect(response.body.contains("expired"))
        }
    }

    @Test("after five failures the account pauses even for the right password, then recovers without being locked for good")
    func throttlePerAccount() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            for _ in 0..<5 {
                let response = try await provider.submitLogin(
                    fixture.appAuthorization, browser: ScriptedBrowser(), username: "alice", password: "wrong")
                #expect(response.status == 401)
            }
            let paused = try await provider.submitLogin(
                fixture.appAuthorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password)
            #expect(paused.status == 429)
            #expect(paused.body.contains("Too many attempts"))
            // Unknown names pause the same way, so pauses reveal nothing.
            for _ in 0..<5 {
                _ = try await provider.submitLogin(fixture.appAuthorization, browser: ScriptedBrowser(), username: "ghost", password: "wrong")
            }
            let ghost = try await provider.submitLogin(fixture.appAuthorization, browser: ScriptedBrowser(), username: "ghost", password: "x")
            #expect(ghost.status == 429)
            #expect(ghost.body.contains("Too many attempts"))

            provider.clock.advance(by: 31)
            let recovered = try await provider.submitLogin(
                fixture.appAuthorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password)
            #expect(recovered.status == 303)
        }
    }

    @Test("pauses grow with each further failure but never exceed the cap")
    func throttleGrowsAndCaps() {
        let policy = ThrottlePolicy()
        #expect(policy.pause(afterFailures: 4, free: 5) == 0)
        #expect(policy.pause(afterFailures: 5, free: 5) == 30)
        #expect(policy.pause(afterFailures: 6, free: 5) == 60)
        #expect(policy.pause(afterFailures: 1000, free: 5) == 900)
    }

    @Test("many failures from one address pause that address across accounts")
    func throttlePerAddress() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            for index in 0..<20 {
                _ = try await provider.submitLogin(fixture.appAuthorization, browser: ScriptedBrowser(), username: "user\(index)", password: "wrong")
            }
            let response = try await provider.submitLogin(
                fixture.appAuthorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password)
            #expect(response.status == 429)
        }
    }

    @Test("the stylesheet is served from this origin")
    func stylesheet() async throws {
        try await withTestProvider { provider in
            let response = try await ScriptedBrowser().get(provider.url("/assets/signet.css"))
            #expect(response.status == 200)
            #expect(response.header("Content-Type")?.hasPrefix("text/css") == true)
        }
    }
}
