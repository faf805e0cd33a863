// What an outside review of the hardening found, each pinned by a test.
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("A login meets a change: a lock, a new password, a spent budget, a registration that changes")
struct LoginMeetsChangeTests {
    /// Alice's native login, waiting at the SMS step.
    func atSMSStep(_ provider: TestProvider) async throws -> (NativeApp, String) {
        let app = NativeApp(provider)
        let (handle, answer) = try await app.throughPassword(scenario: .usernamePasswordSMS)
        #expect(answer.json["next_step"] as? String == "sms_code")
        return (app, handle)
    }

    @Test("locking a user ends a login in progress: the right code no longer finishes it")
    func lockDuringLogin() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let (app, handle) = try await atSMSStep(provider)
            try await provider.admin.setLocked(username: "alice", true)
            let answer = try await app.step("sms_code", handle, ["code": try await app.lastCode()])
            #expect(answer.status == 403)
            #expect(answer.json["authorization_code"] == nil)
            #expect(answer.oauthError == "login_required")
        }
    }

    @Test("a new password ends a login that checked the old one, on the API and the page")
    func passwordChangeDuringLogin() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (app, handle) = try await atSMSStep(provider)
            let apiCode = try await app.lastCode()
            let browser = ScriptedBrowser()
            let page = try await provider.submitLogin(
                fixture.appAuthorization, browser: browser, username: "alice", password: Fixture.password,
                extra: [("acr_values", AssuranceLevel.twoFactors)])
            let fields = try #require(LoginForm.fields(in: page.body))
            let pageCode = String(try #require(await provider.outbox.messages.last?.body.split(separator: "#").last))
            try await provider.admin.setPassword(username: "alice", password: "a new passphrase")
            let api = try await app.step("sms_code", handle, ["code": apiCode])
            #expect(api.json["authorization_code"] == nil)
            #expect(api.status == 403)
            let posted = try await browser.post(
                provider.url("/login/sms"), form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("code", pageCode)])
            #expect(posted.header("Location") == nil)
            #expect(browser.cookieJar["signet_session"] == nil)
        }
    }

    @Test("a locked user's refresh token and access token stop working even if issued after the lock")
    func lockedUserTokens() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (authorization, response) = try await fixture.backendTokens()
            _ = authorization
            let tokens = try response.decode(TokenResponse.self)
            // Lock without the usual revocation, as if a token had slipped through: the endpoints still refuse.
            var alice = try #require(try await provider.store.user(username: "alice"))
            alice.locked = true
            #expect(try await provider.store.replaceUser(alice, expectedStamp: alice.securityStamp))
            let refresh = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken))] + (try fixture.assertion()))
            #expect(refresh.oauthError == "invalid_grant")
            let userInfo = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")])
            #expect(userInfo.status == 401)
        }
    }

    @Test("parallel right codes: one finishes, the others are conflicts, none is told to wait a day")
    func parallelRightCodes() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let (app, handle) = try await atSMSStep(provider)
            let code = try await app.lastCode()
            let answers = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<30 {
                    group.addTask {
                        let answer = try await app.step("sms_code", handle, ["code": code])
                        return answer.json["next_step"] as? String ?? answer.oauthError
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0 == "finished" }.count == 1)
            #expect(!answers.contains("account_code_limit"), "\(answers)")
        }
    }

    @Test("a client's registration is read again at each step: native login withdrawn, or min_acr raised, mid-login")
    func registrationChangesMidLogin() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let started = try await app.start()
            let handle = try #require(started.json["login_session"] as? String)
            _ = try await app.step("scenario", handle, ["scenario": LoginScenario.usernamePassword.rawValue])
            try await provider.admin.updateClient(id: "app", .init(minimumACR: .some(AssuranceLevel.twoFactors)))
            let raised = try await app.step("username_password", handle, ["username": "alice", "password": Fixture.password])
            #expect(raised.json["next_step"] as? String == "sms_code")

            let second = try #require(try await app.start().json["login_session"] as? String)
            try await provider.admin.updateClient(id: "app", .init(nativeLogin: false))
            let withdrawn = try await app.step("scenario", second, ["scenario": LoginScenario.usernamePasswordSMS.rawValue])
            #expect(withdrawn.status == 403)
            #expect(withdrawn.oauthError == "unauthorized_client")
        }
    }

    @Test("a refresh token from a one-factor grant is refused once the client requires two factors")
    func refreshAfterMinimumRaised() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            try await provider.admin.updateClient(id: "backend", .init(minimumACR: .some(AssuranceLevel.twoFactors)))
            let refresh = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken))] + (try fixture.assertion()))
            #expect(refresh.oauthError == "invalid_grant")
        }
    }

    @Test("one login may try at most 10 passwords, then it must start again")
    func passwordsPerLogin() async throws {
        try await withTestProvider(configure: {
            $0.throttle.freeFailuresPerAccount = 100; $0.throttle.freeFailuresPerAddress = 100
        }) { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let started = try await app.start()
            let handle = try #require(started.json["login_session"] as? String)
            _ = try await app.step("scenario", handle, ["scenario": LoginScenario.usernamePassword.rawValue])
            for index in 0..<10 {
                #expect(
                    try await app.step("username_password", handle, ["username": "name\(index)", "password": "guess"]).oauthError
                        == "invalid_credentials")
            }
            let eleventh = try await app.step("username_password", handle, ["username": "alice", "password": Fixture.password])
            #expect(eleventh.oauthError == "login_attempts_exhausted")
            #expect(
                try await app.step("username_password", handle, ["username": "alice", "password": Fixture.password]).oauthError
                    == "invalid_login_session")
        }
    }

    @Test("the continue page respects max_age: a session older than asked gets the login form")
    func continueRespectsMaxAge() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            _ = try await provider.signIn(fixture.backendAuthorization, browser: browser, username: "alice", password: Fixture.password)
            let page = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer, extra: [("max_age", "60")]))
            let fields = try #require(LoginForm.fields(in: page.body))
            provider.clock.advance(by: 120)
            let posted = try await browser.post(
                provider.url("/login/continue"),
                form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("choice", "continue")])
            #expect(posted.status == 200)
            #expect(posted.header("Location") == nil)
            #expect(posted.body.contains("id=\"login-form\""))
        }
    }
}
