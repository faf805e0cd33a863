// Nothing secret reaches the log: every credential the flows use is searched for in the whole output.
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Operations: secrets never reach the log")
struct LogSecrecyTests {
    @Test("passwords, SMS codes, authorization codes, tokens, client assertions and secrets, cookies and query strings: none in the trace-level log")
    func noSecretInLogs() async throws {
        let capture = LogCapture()
        var secrets: [String: String] = [:]
        try await withTestProvider(logger: capture.logger(level: .trace)) { provider in
            let fixture = try await Fixture.make(provider)
            secrets["password"] = Fixture.password
            secrets["client_secret_basic"] = fixture.basicSecret
            secrets["client_secret_post"] = fixture.postSecret

            // A wrong password, then a two-factor page login.
            let wrongPassword = "wrong-\(UUID().uuidString)"
            secrets["wrong password"] = wrongPassword
            _ = try await provider.submitLogin(fixture.backendAuthorization, browser: ScriptedBrowser(), username: "alice", password: wrongPassword)
            let browser = ScriptedBrowser()
            let authorization = fixture.backendAuthorization
            secrets["state"] = authorization.state
            secrets["nonce"] = authorization.nonce
            secrets["code_verifier"] = authorization.verifier
            secrets["code_challenge"] = authorization.challenge
            let page = try await provider.submitLogin(
                authorization, browser: browser, username: "alice", password: Fixture.password, extra: [("acr_values", "urn:signet:loa:2")])
            let fields = try #require(LoginForm.fields(in: page.body))
            let smsCode = String(try #require(await provider.outbox.messages.last?.body.split(separator: "#").last))
            secrets["SMS code"] = smsCode
            _ = try await browser.post(
                provider.url("/login/sms"), form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("code", "000000")])
            let done = try await browser.post(
                provider.url("/login/sms"), form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("code", smsCode)])
            let code = try #require(done.locationParameters?["code"])
            secrets["authorization code"] = code
            secrets["CSRF token"] = fields.csrfToken
            for (name, value) in browser.cookieJar { secrets["cookie \(name)"] = value }

            // The token endpoint with a client assertion, refresh, userinfo, revocation.
            let assertion = try fixture.assertion()
            secrets["client assertion"] = assertion.first { $0.0 == "client_assertion" }?.1
            let tokens = try await provider.redeem(code, authorization, clientAuth: assertion).decode(TokenResponse.self)
            secrets["access token"] = tokens.accessToken
            secrets["ID token"] = tokens.idToken
            secrets["refresh token"] = tokens.refreshToken
            let refreshed = try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", tokens.refreshToken!)] + (try fixture.assertion()))
            let second = try refreshed.decode(TokenResponse.self)
            secrets["refreshed access token"] = second.accessToken
            secrets["rotated refresh token"] = second.refreshToken
            _ = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(second.accessToken)")])
            _ = try await ScriptedBrowser().post(provider.url("/userinfo"), form: [("access_token", second.accessToken)])
            _ = try await ScriptedBrowser().post(provider.url("/revoke"), form: [("token", second.refreshToken ?? "")] + (try fixture.assertion()))
            // A replayed code and a reused refresh token: refused, and still not logged.
            _ = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            _ = try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", tokens.refreshToken!)] + (try fixture.assertion()))

            // Client secrets, right and wrong, in the header and the body.
            let basic = Data("basic:\(fixture.basicSecret)".utf8).base64EncodedString()
            _ = try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "authorization_code"), ("code", "x"), ("redirect_uri", Fixture.backendRedirect)],
                headers: [("Authorization", "Basic \(basic)")])
            _ = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [("grant_type", "authorization_code"), ("code", "x"), ("client_id", "post"), ("client_secret", fixture.postSecret)])
            let wrongSecret = "not-the-secret-\(UUID().uuidString)"
            secrets["wrong client secret"] = wrongSecret
            _ = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [("grant_type", "authorization_code"), ("code", "x"), ("client_id", "post"), ("client_secret", wrongSecret)])

            // The native login API: a password and an SMS code in JSON bodies.
            let app = NativeApp(provider)
            let (session, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            secrets["native login session"] = session
            let nativeCode = try await app.lastCode()
            secrets["native SMS code"] = nativeCode
            let finished = try await app.step("sms_code", session, ["code": nativeCode])
            secrets["native authorization code"] = finished.json["authorization_code"] as? String

            // Logout with the ID token as hint (in the query).
            _ = try await browser.get(
                provider.url("/logout?id_token_hint=\(tokens.idToken!)&post_logout_redirect_uri=https://service.example.com/bye"))
        }
        let log = capture.text
        #expect(log.contains("\"message\":\"request\""), "the capture saw the provider's request lines")
        #expect(secrets.count >= 20)
        for (name, secret) in secrets where secret.count >= 6 {
            #expect(!log.contains(secret), "the log holds the \(name)")
        }
        // No query string at all: the marker parameters never appear.
        for marker in ["code_challenge=", "id_token_hint=", "client_secret=", "password="] {
            #expect(!log.contains(marker), "the log holds a query or form: \(marker)")
        }
    }
}
