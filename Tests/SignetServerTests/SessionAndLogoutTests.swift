import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Browser session, prompt, max_age and logout")
struct SessionAndLogoutTests {
    @Test("a signed-in browser gets a code without the page for a claimed-https client; prompt=login and max_age=0 show the page again")
    func singleSignOn() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            _ = try await provider.signIn(fixture.backendAuthorization, browser: browser, username: "alice", password: Fixture.password)
            let silent = try await browser.get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("prompt", "none")]))
            #expect(silent.status == 302)
            #expect(silent.locationParameters?["code"] != nil)
            let again = try await browser.get(fixture.backendAuthorization.url(issuer: provider.issuer))
            #expect(again.status == 302)
            for extra in [("prompt", "login"), ("max_age", "0")] {
                provider.clock.advance(by: 2)
                let page = try await browser.get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [extra]))
                #expect(page.status == 200, "\(extra)")
                #expect(LoginForm.fields(in: page.body) != nil)
            }
        }
    }

    @Test("logout with a valid id_token_hint ends the session and returns to the registered URI with state")
    func logoutWithHint() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            let tokens = try await fixture.backendTokens(browser: browser).1.decode(TokenResponse.self)
            let response = try await browser.get(
                provider.url("/logout?")
                    + FormParameters([
                        ("id_token_hint", tokens.idToken!), ("post_logout_redirect_uri", "https://service.example.com/bye"), ("state", "s1"),
                    ]).encoded)
            #expect(response.status == 302)
            #expect(response.header("Location") == "https://service.example.com/bye?state=s1")
            #expect(browser.cookieJar["signet_session"] == nil)
            let afterwards = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer, extra: [("prompt", "none")]))
            #expect(afterwards.locationParameters?["error"] == "login_required")
        }
    }

    @Test("an unregistered post_logout_redirect_uri or a forged hint is refused without redirecting")
    func logoutRefusals() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let unregistered = try await ScriptedBrowser().get(
                provider.url("/logout?")
                    + FormParameters([("id_token_hint", tokens.idToken!), ("post_logout_redirect_uri", "https://evil.example.com/")]).encoded)
            #expect(unregistered.status == 400)
            #expect(unregistered.header("Location") == nil)
            let forged = try await ScriptedBrowser().get(provider.url("/logout?id_token_hint=eyJhbGciOiJub25lIn0.e30."))
            #expect(forged.status == 400)
        }
    }

    @Test("without a hint the user confirms with a CSRF-protected form")
    func logoutConfirmation() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            _ = try await provider.signIn(fixture.appAuthorization, browser: browser, username: "alice", password: Fixture.password)
            let page = try await browser.get(provider.url("/logout"))
            #expect(page.status == 200)
            #expect(page.body.contains("Sign out?"))
            let forged = try await browser.post(provider.url("/logout"), form: [("csrf_token", "forged")])
            #expect(forged.status == 403)
            #expect(browser.cookieJar["signet_session"] != nil)
            let token = try #require(LoginForm.hiddenValue("csrf_token", in: page.body))
            let confirmed = try await browser.post(provider.url("/logout"), form: [("csrf_token", token)])
            #expect(confirmed.status == 200)
            #expect(browser.cookieJar["signet_session"] == nil)
        }
    }

    @Test("key rotation publishes the next key before use and keeps old tokens valid")
    func keyRotation() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let before = try await ScriptedBrowser().get(provider.url("/jwks")).decode(PublicJWKS.self)
            let oldTokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let newKID = try await provider.admin.rotateKeys(configuration: provider.configuration)
            #expect(before.keys.contains { $0.kid == newKID })
            provider.clock.advance(by: 61)
            let after = try await ScriptedBrowser().get(provider.url("/jwks")).decode(PublicJWKS.self)
            #expect(after.keys.count == 3)
            let newTokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            #expect(TestJWS.verifiedES256(newTokens.idToken!, jwks: after)?.header["kid"] as? String == newKID)
            let stillValid = try await ScriptedBrowser().get(
                provider.url("/userinfo"), headers: [("Authorization", "Bearer \(oldTokens.accessToken)")])
            #expect(stillValid.status == 200)
            // Once every token of the retired key has expired, it leaves the JWKS.
            provider.clock.advance(by: 700)
            let later = try await ScriptedBrowser().get(provider.url("/jwks")).decode(PublicJWKS.self)
            #expect(later.keys.count == 2)
        }
    }
}
