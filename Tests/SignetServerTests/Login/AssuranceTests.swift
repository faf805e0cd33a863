// Assurance a request cannot downgrade: per-client minimum acr, confirmation before silent codes
// to public apps (RFC 8252 §8.6), native login by registration only, and revocation of everything
// a user signed in to when the password changes or the user is locked or removed.
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Assurance a request cannot downgrade")
struct AssuranceTests {
    func idTokenClaims(_ response: ScriptedResponse) throws -> IDTokenClaims {
        let tokens = try response.decode(TokenResponse.self)
        let idToken = try #require(tokens.idToken)
        return try #require(IDTokenClaims.unverified(idToken))
    }

    @Test("a client's min_acr makes the page ask for the SMS code although the request asks for nothing; the ID token says loa:2")
    func minimumACROnThePage() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            try await provider.admin.updateClient(id: "backend", .init(minimumACR: .some(AssuranceLevel.twoFactors)))
            let browser = ScriptedBrowser()
            let authorization = fixture.backendAuthorization
            let afterPassword = try await provider.submitLogin(authorization, browser: browser, username: "alice", password: Fixture.password)
            #expect(afterPassword.status == 200)
            #expect(afterPassword.body.contains("Enter the code"))
            let fields = try #require(LoginForm.fields(in: afterPassword.body))
            let message = try #require(await provider.outbox.messages.last)
            let code = String(try #require(message.body.split(separator: "#").last))
            let done = try await browser.post(
                provider.url("/login/sms"), form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("code", code)])
            let issued = try #require(done.locationParameters?["code"])
            let claims = try idTokenClaims(try await provider.redeem(issued, authorization, clientAuth: try fixture.assertion()))
            #expect(claims.acr == AssuranceLevel.twoFactors)
            #expect(claims.amr == ["pwd", "sms", "mfa"])
        }
    }

    @Test("an edited acr_values=loa:1 does not lower a client's minimum, on the page or the native API")
    func editedRequestCannotDowngrade() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            try await provider.admin.updateClient(id: "app", .init(minimumACR: .some(AssuranceLevel.twoFactors)))
            let page = try await provider.submitLogin(
                fixture.appAuthorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password,
                extra: [("acr_values", AssuranceLevel.oneFactor)])
            #expect(page.status == 200)
            #expect(page.body.contains("Enter the code"))
            let app = NativeApp(provider)
            let started = try await app.start(extra: ["acr_values": AssuranceLevel.oneFactor])
            #expect(started.json["scenarios"] as? [String] == [LoginScenario.usernamePasswordSMS.rawValue])
            let handle = try #require(started.json["login_session"] as? String)
            let refused = try await app.step("scenario", handle, ["scenario": LoginScenario.usernamePassword.rawValue])
            #expect(refused.status == 403)
            #expect(refused.oauthError == "unauthorized_client")
        }
    }

    @Test("a one-factor browser session does not answer a client whose minimum is two factors")
    func minimumACRStepsUp() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            _ = try await provider.signIn(fixture.backendAuthorization, browser: browser, username: "alice", password: Fixture.password)
            try await provider.admin.updateClient(id: "backend", .init(minimumACR: .some(AssuranceLevel.twoFactors)))
            let silent = try await browser.get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("prompt", "none")]))
            #expect(silent.locationParameters?["error"] == "login_required")
            let page = try await browser.get(fixture.backendAuthorization.url(issuer: provider.issuer))
            #expect(page.status == 200)
            #expect(LoginForm.fields(in: page.body) != nil)
        }
    }

    @Test("a public app with a private-use or loopback redirect gets a 'Continue as' page, never a silent code; prompt=none is interaction_required")
    func continueAsForPublicApps() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            _ = try await provider.signIn(fixture.backendAuthorization, browser: browser, username: "alice", password: Fixture.password)
            for redirect in [Fixture.appRedirect, "http://127.0.0.1:5123/callback"] {
                let authorization = TestAuthorization(clientID: "app", redirectURI: redirect)
                let silent = try await browser.get(authorization.url(issuer: provider.issuer, extra: [("prompt", "none")]))
                #expect(silent.locationParameters?["error"] == "interaction_required")
                #expect(silent.locationParameters?["code"] == nil)
                let page = try await browser.get(authorization.url(issuer: provider.issuer))
                #expect(page.status == 200)
                #expect(page.header("Location") == nil)
                #expect(page.body.contains("Continue as alice"))
                #expect(page.body.contains("Example App"))
                #expect(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
                let fields = try #require(LoginForm.fields(in: page.body))
                // Without the page's token, or from another browser: refused, and the login is untouched.
                let forged = try await browser.post(
                    provider.url("/login/continue"), form: [("authorization", fields.authorization), ("choice", "continue")])
                #expect(forged.status == 403)
                let elsewhere = try await ScriptedBrowser().post(
                    provider.url("/login/continue"),
                    form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("choice", "continue")])
                #expect(elsewhere.status == 403)
                let confirmed = try await browser.post(
                    provider.url("/login/continue"),
                    form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("choice", "continue")])
                #expect(confirmed.status == 303)
                let code = try #require(confirmed.locationParameters?["code"])
                #expect(try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")]).status == 200)
                let replay = try await browser.post(
                    provider.url("/login/continue"),
                    form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("choice", "continue")])
                #expect(replay.status == 400)
                #expect(replay.header("Location") == nil)
            }
        }
    }

    @Test("'Use another account' shows the login form for the same request")
    func switchAccount() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            try await provider.admin.addUser(username: "bob", password: "bobs passphrase")
            let browser = ScriptedBrowser()
            _ = try await provider.signIn(fixture.backendAuthorization, browser: browser, username: "alice", password: Fixture.password)
            let authorization = fixture.appAuthorization
            let page = try await browser.get(authorization.url(issuer: provider.issuer))
            let fields = try #require(LoginForm.fields(in: page.body))
            let switched = try await browser.post(
                provider.url("/login/continue"),
                form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("choice", "switch")])
            #expect(switched.status == 200)
            #expect(switched.body.contains("id=\"login-form\""))
            let signedIn = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "bob"), ("password", "bobs passphrase"),
                ])
            #expect(signedIn.status == 303)
            let code = try #require(signedIn.locationParameters?["code"])
            let tokens = try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")])
            #expect(tokens.status == 200, "\(tokens.body)")
            #expect(try idTokenClaims(tokens).sub != fixture.user.id)
        }
    }

    @Test("the native login API is refused to clients not registered for it")
    func nativeLoginIsOptIn() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let refused = try await NativeApp(provider, clientID: "basic", redirectURI: Fixture.backendRedirect).start()
            #expect(refused.status == 403)
            #expect(refused.oauthError == "unauthorized_client")
            try await provider.admin.updateClient(id: "basic", .init(nativeLogin: true))
            #expect(try await NativeApp(provider, clientID: "basic", redirectURI: Fixture.backendRedirect).start().status == 201)
        }
    }

    /// Alice signed in on the page (browser session, refresh token) and remembered by the native API.
    func signedInEverywhere(_ provider: TestProvider, _ fixture: Fixture) async throws -> (
        ScriptedBrowser, refreshToken: String, rememberToken: String
    ) {
        let browser = ScriptedBrowser()
        let tokens = try await fixture.backendTokens(browser: browser).1.decode(TokenResponse.self)
        let (_, finished) = try await NativeApp(provider).throughPassword(scenario: .usernamePassword, extra: ["remember_me": true])
        return (browser, try #require(tokens.refreshToken), try #require(finished.json["remember_token"] as? String))
    }

    func expectEverythingRevoked(
        _ provider: TestProvider, _ fixture: Fixture, _ signedIn: (ScriptedBrowser, refreshToken: String, rememberToken: String)
    ) async throws {
        let refresh = try await ScriptedBrowser().post(
            provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", signedIn.refreshToken)] + (try fixture.assertion()))
        #expect(refresh.oauthError == "invalid_grant")
        let silent = try await signedIn.0.get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("prompt", "none")]))
        #expect(silent.locationParameters?["error"] == "login_required")
        #expect(try await NativeApp(provider).start(extra: ["remember_token": signedIn.rememberToken]).oauthError == "invalid_remember_token")
    }

    @Test("setting a password revokes the user's browser sessions, grants, refresh tokens and remember tokens")
    func passwordChangeRevokes() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let signedIn = try await signedInEverywhere(provider, fixture)
            try await provider.admin.setPassword(username: "alice", password: "a new passphrase")
            try await expectEverythingRevoked(provider, fixture, signedIn)
            #expect(
                try await provider.submitLogin(fixture.appAuthorization, browser: ScriptedBrowser(), username: "alice", password: "a new passphrase")
                    .status == 303)
        }
    }

    @Test("locking a user revokes everything and refuses sign-in with account_locked; unlocking lets them in again")
    func lockRevokes() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let signedIn = try await signedInEverywhere(provider, fixture)
            try await provider.admin.setLocked(username: "alice", true)
            try await expectEverythingRevoked(provider, fixture, signedIn)
            let (_, refused) = try await NativeApp(provider).throughPassword(scenario: .usernamePassword)
            #expect(refused.status == 403)
            #expect(refused.oauthError == "account_locked")
            let page = try await provider.submitLogin(
                fixture.appAuthorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password)
            #expect(page.status == 403)
            #expect(page.header("Location") == nil)
            // A wrong password on a locked account says only that it is wrong.
            #expect(
                try await NativeApp(provider).throughPassword(scenario: .usernamePassword, password: "wrong").1.oauthError == "invalid_credentials")
            try await provider.admin.setLocked(username: "alice", false)
            #expect(try await NativeApp(provider).throughPassword(scenario: .usernamePassword).1.json["next_step"] as? String == "finished")
        }
    }

    @Test("removing a user revokes their grants and sessions")
    func removalRevokes() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let signedIn = try await signedInEverywhere(provider, fixture)
            try await provider.admin.removeUser(username: "alice")
            let refresh = try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", signedIn.refreshToken)] + (try fixture.assertion()))
            #expect(refresh.oauthError == "invalid_grant")
            #expect(try await provider.store.deleteRememberTokens(userID: fixture.user.id) == 0)
        }
    }

    @Test(
        "an acr asked for as essential in the claims parameter is a requirement (OIDC Core §5.5.1.1): a one-factor session does not meet loa:2, silently or on the page"
    )
    func essentialACRInClaims() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            _ = try await provider.signIn(fixture.backendAuthorization, browser: browser, username: "alice", password: Fixture.password)
            let essential = #"{"id_token":{"acr":{"essential":true,"values":["urn:signet:loa:2"]}}}"#
            let silent = try await browser.get(
                fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("prompt", "none"), ("claims", essential)]))
            #expect(silent.locationParameters?["error"] == "login_required")
            let page = try await browser.get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("claims", essential)]))
            #expect(page.status == 200 && LoginForm.fields(in: page.body) != nil, "the login is asked for again")
            // A voluntary acr, or an essential one the session meets, asks for nothing more.
            for claims in [
                #"{"id_token":{"acr":{"values":["urn:signet:loa:2"]}}}"#, #"{"id_token":{"acr":{"essential":true,"value":"urn:signet:loa:1"}}}"#,
            ] {
                let answered = try await browser.get(
                    fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("prompt", "none"), ("claims", claims)]))
                #expect(answered.locationParameters?["code"] != nil, "\(claims): \(answered.status) \(answered.header("Location") ?? "")")
            }
        }
    }

    @Test(
        "claims is read strictly: an essential acr no level meets is access_denied; essential 1, a repeated member or an acr value that is not a string is invalid_request"
    )
    func claimsReadStrictly() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            func error(_ claims: String) async throws -> String? {
                let response = try await ScriptedBrowser().get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("claims", claims)]))
                return response.locationParameters?["error"]
            }
            #expect(try await error(#"{"id_token":{"acr":{"essential":true,"values":["urn:example:unknown"]}}}"#) == "access_denied")
            #expect(try await error(#"{"id_token":{"acr":{"essential":1,"values":["urn:signet:loa:2"]}}}"#) == "invalid_request")
            #expect(try await error(#"{"id_token":{"acr":{"essential":true,"values":["urn:signet:loa:2"],"essential":false}}}"#) == "invalid_request")
            #expect(try await error(#"{"id_token":{},"id_token":{}}"#) == "invalid_request")
            #expect(try await error(#"{"id_token":{"acr":{"value":2}}}"#) == "invalid_request")
            #expect(try await error("[]") == "invalid_request")
            // Other claims, and an unknown value beside a known one, are no refusal.
            let page = try await ScriptedBrowser().get(
                fixture.backendAuthorization.url(
                    issuer: provider.issuer,
                    extra: [
                        (
                            "claims",
                            #"{"userinfo":{"email":{"essential":1}},"id_token":{"acr":{"essential":true,"values":["urn:example:x","urn:signet:loa:1"]}}}"#
                        )
                    ]))
            #expect(page.status == 200 && LoginForm.fields(in: page.body) != nil, "\(page.status) \(page.header("Location") ?? "")")
        }
    }
}
