import SignetScript
import SignetServer
import SignetTesting
import Testing

/// Alice signed in to the backend client in a fresh browser, then on the logout page: the
/// browser and the page's anti-CSRF token, for tests of what the logout form accepts.
func signedInAtLogoutPage(_ provider: TestProvider, _ fixture: Fixture) async throws -> (browser: ScriptedBrowser, csrfToken: String) {
    let browser = ScriptedBrowser()
    _ = try await provider.signIn(fixture.backendAuthorization, browser: browser, username: "alice", password: Fixture.password)
    let page = try await browser.get(provider.url("/logout"))
    return (browser, try #require(LoginForm.hiddenValue("csrf_token", in: page.body)))
}
