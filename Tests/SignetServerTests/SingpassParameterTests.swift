// Singpass's native-app parameters: redirect_uri_https_type=app_claimed_https and app_launch_url.
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Singpass native-app parameters")
struct SingpassParameterTests {
    static let launchURL = "https://service.example.com/app/return"

    @Test("app_claimed_https: the code comes back on a page with a 'Return to' link, not an HTTP redirect; also for single sign-on")
    func returnByLink() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            let authorization = fixture.backendAuthorization
            let page = try await provider.submitLogin(
                authorization, browser: browser, username: "alice", password: Fixture.password,
                extra: [("redirect_uri_https_type", "app_claimed_https")])
            #expect(page.status == 200)
            #expect(page.header("Location") == nil)
            #expect(page.body.contains("Return to Example Service"))
            // No script runs on it (default-src 'none'), and it cannot be framed.
            #expect(page.header("Content-Security-Policy")?.hasPrefix("default-src 'none';") == true)
            #expect(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
            #expect(!page.body.contains("<script"))
            let href = try #require(
                page.body.range(of: #"id="return-link" class="button" href=""#).map { page.body[$0.upperBound...].prefix { $0 != "\"" } })
            let location = String(href).replacingOccurrences(of: "&amp;", with: "&")
            #expect(location.hasPrefix(Fixture.backendRedirect + "?code="))
            #expect(browser.cookieJar["signet_session"] != nil)
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
            #expect(try await provider.redeem(code, authorization, clientAuth: try fixture.assertion()).status == 200)

            let silent = try await browser.get(
                fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("redirect_uri_https_type", "app_claimed_https")]))
            #expect(silent.status == 200)
            #expect(silent.body.contains("id=\"return-link\""))
            // Without the parameter: the usual redirect.
            #expect(try await browser.get(fixture.backendAuthorization.url(issuer: provider.issuer)).status == 302)
        }
    }

    @Test("redirect_uri_https_type takes only app_claimed_https, and only with an https redirect")
    func redirectTypeChecks() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let unknown = try await ScriptedBrowser().get(
                fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("redirect_uri_https_type", "standard")]))
            #expect(unknown.locationParameters?["error"] == "invalid_request")
            let scheme = try await ScriptedBrowser().get(
                fixture.appAuthorization.url(issuer: provider.issuer, extra: [("redirect_uri_https_type", "app_claimed_https")]))
            #expect(scheme.locationParameters?["error"] == "invalid_request")
        }
    }

    @Test("app_launch_url must be https and registered for the client; it is kept with the login")
    func appLaunchURL() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let unregistered = try await ScriptedBrowser().get(
                fixture.appAuthorization.url(issuer: provider.issuer, extra: [("app_launch_url", Self.launchURL)]))
            #expect(unregistered.locationParameters?["error"] == "invalid_request")
            var new = SignetAdmin.NewClient(id: "singpass-app", name: "Singpass App", authMethod: .none, redirectURIs: ["sg.example.app:/cb"])
            new.appLaunchURLs = [Self.launchURL]
            _ = try await provider.admin.addClient(new)
            let authorization = TestAuthorization(clientID: "singpass-app", redirectURI: "sg.example.app:/cb")
            let plain = try await ScriptedBrowser().get(
                authorization.url(issuer: provider.issuer, extra: [("app_launch_url", "http://service.example.com/app/return")]))
            #expect(plain.locationParameters?["error"] == "invalid_request")
            let page = try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer, extra: [("app_launch_url", Self.launchURL)]))
            #expect(page.status == 200)
            let handle = try #require(LoginForm.fields(in: page.body)?.authorization)
            #expect(try await provider.store.loginSession(id: SecretDigest.hex(handle))?.request.appLaunchURL == Self.launchURL)
            var bad = SignetAdmin.NewClient(id: "bad", name: "Bad", authMethod: .none, redirectURIs: ["sg.example.bad:/cb"])
            bad.appLaunchURLs = ["http://insecure.example.com/"]
            await #expect(throws: SignetError.self) { _ = try await provider.admin.addClient(bad) }
        }
    }
}
