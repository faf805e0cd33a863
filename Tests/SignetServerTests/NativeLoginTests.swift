import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

/// Drives the native login API as an app would.
struct NativeApp {
    let provider: TestProvider
    var clientID = "app"
    var authorization: TestAuthorization

    init(_ provider: TestProvider, clientID: String = "app", redirectURI: String = Fixture.appRedirect) {
        self.provider = provider
        self.clientID = clientID
        self.authorization = TestAuthorization(clientID: clientID, redirectURI: redirectURI)
    }

    func post(_ path: String, _ body: [String: Any], headers: [(String, String)] = []) async throws -> ScriptedResponse {
        let data = try JSONSerialization.data(withJSONObject: body)
        return try await ScriptedBrowser().send(
            "POST", provider.url("/login/native/" + path), body: String(decoding: data, as: UTF8.self),
            headers: [("Content-Type", "application/json")] + headers)
    }

    func start(extra: [String: String] = [:], omit: Set<String> = []) async throws -> ScriptedResponse {
        var body: [String: Any] = [:]
        for (name, value) in authorization.parameters(omit: omit) { body[name] = value }
        for (name, value) in extra { body[name] = value }
        return try await post("start", body)
    }

    func step(_ path: String, _ session: String, _ fields: [String: Any] = [:], clientID: String? = nil, headers: [(String, String)] = [])
        async throws -> ScriptedResponse
    {
        var body = fields
        body["login_session"] = session
        body["client_id"] = clientID ?? self.clientID
        return try await post(path, body, headers: headers)
    }

    /// start → scenario → username/password; returns the session handle and the last answer.
    func throughPassword(
        scenario: LoginScenario, username: String = "alice", password: String = Fixture.password, extra: [String: Any] = [:],
        startExtra: [String: String] = [:],
        headers: [(String, String)] = []
    ) async throws -> (String, ScriptedResponse) {
        let started = try await start(extra: startExtra)
        let session = try #require(started.json["login_session"] as? String)
        let chosen = try await step("scenario", session, ["scenario": scenario.rawValue])
        #expect(chosen.status == 200)
        return (
            session,
            try await step("username_password", session, ["username": username, "password": password].merging(extra) { $1 }, headers: headers)
        )
    }

    /// The code in the last SMS to the fixture user.
    func lastCode(to phone: String = "+4511111111") async throws -> String {
        let message = try #require(await provider.outbox.last(to: phone))
        return String(try #require(message.body.split(separator: "#").last))
    }

    /// Redeems a finished login's code at /token as the public app.
    func redeem(_ finished: ScriptedResponse) async throws -> ScriptedResponse {
        let code = try #require(finished.json["authorization_code"] as? String)
        return try await provider.redeem(code, authorization, clientAuth: [("client_id", clientID)])
    }
}

@Suite("Native login API: stepwise password and SMS")
struct NativeLoginTests {
    @Test("start checks the request with the /authorize rules and lists the scenarios")
    func startValidates() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let started = try await app.start()
            #expect(started.status == 201)
            #expect(started.json["next_step"] as? String == "select_scenario")
            #expect(Set(started.json["scenarios"] as? [String] ?? []) == ["s_mobile_authn_un_pwd_sms", "s_mobile_authn_un_pwd"])
            #expect(try await app.start(omit: ["code_challenge", "code_challenge_method"]).oauthError == "invalid_request")
            #expect(try await app.start(extra: ["code_challenge_method": "plain"]).oauthError == "invalid_request")
            #expect(try await app.start(extra: ["redirect_uri": "com.example.app:/other"]).oauthError == "invalid_request")
            let unknown = try await app.start(extra: ["client_id": "nobody"])
            #expect(unknown.status == 401)
            #expect(unknown.oauthError == "invalid_client")
            let twoFactor = try await app.start(extra: ["acr_values": "urn:signet:loa:2"])
            #expect(twoFactor.json["scenarios"] as? [String] == ["s_mobile_authn_un_pwd_sms"])
            let wrongType = try await ScriptedBrowser().post(provider.url("/login/native/start"), form: [("client_id", "app")])
            #expect(wrongType.status == 415)
            let malformed = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"), body: "{not json", headers: [("Content-Type", "application/json")])
            #expect(malformed.status == 400)
            // A byte-order mark before the text: JSONDecoder would skip it and keep one of two
            // client_id members the strict reader never saw; it is refused as not JSON.
            let body = #"{"client_id":"app","redirect_uri":"x","client_id":"nope"}"#
            let marked = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"), body: "\u{FEFF}" + body, headers: [("Content-Type", "application/json")])
            #expect(marked.status == 400)
            #expect(marked.json["error_description"] as? String == "the body must be one JSON object")
            let plain = try await app.start()
            let bommed = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"),
                body: "\u{FEFF}"
                    + String(
                        decoding: try JSONSerialization.data(
                            withJSONObject: app.authorization.parameters().reduce(into: [String: String]()) { $0[$1.0] = $1.1 }), as: UTF8.self),
                headers: [("Content-Type", "application/json")])
            #expect(plain.status == 201 && bommed.status == 400, "a mark before even a well-formed body is refused")
        }
    }

    @Test("username and password alone finish with a code bound like a browser code (amr pwd)")
    func passwordOnly() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (_, finished) = try await app.throughPassword(scenario: .usernamePassword)
            #expect(finished.status == 200)
            #expect(finished.json["next_step"] as? String == "finished")
            #expect(finished.json["state"] as? String == app.authorization.state)
            #expect(finished.json["iss"] as? String == provider.issuer)
            let tokens = try await app.redeem(finished)
            #expect(tokens.status == 200)
            let jwks = try await ScriptedBrowser().get(provider.url("/jwks")).decode(PublicJWKS.self)
            let claims = try #require(TestJWS.verifiedES256(try tokens.decode(TokenResponse.self).idToken!, jwks: jwks)?.claims)
            #expect(claims["amr"] as? [String] == ["pwd"])
            #expect(claims["acr"] as? String == "urn:signet:loa:1")
            #expect(claims["nonce"] as? String == app.authorization.nonce)
        }
    }

    @Test("with SMS: the code goes out in the origin-bound format, and finishing gives amr pwd+sms+mfa")
    func withSMS() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (session, afterPassword) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            #expect(afterPassword.json["next_step"] as? String == "sms_code")
            let sms = try #require(afterPassword.json["sms"] as? [String: Any])
            #expect(sms["phone_hint"] as? String == "•••• 11")
            #expect(sms["digits"] as? Int == 6)
            let message = try #require(await provider.outbox.last(to: "+4511111111"))
            let code = try await app.lastCode()
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            #expect(message.body.hasSuffix("@127.0.0.1 #\(code)"))
            #expect(message.body.contains("Example App"))
            let finished = try await app.step("sms_code", session, ["code": code])
            #expect(finished.json["next_step"] as? String == "finished")
            let tokens = try await app.redeem(finished)
            let jwks = try await ScriptedBrowser().get(provider.url("/jwks")).decode(PublicJWKS.self)
            let claims = try #require(TestJWS.verifiedES256(try tokens.decode(TokenResponse.self).idToken!, jwks: jwks)?.claims)
            #expect(claims["amr"] as? [String] == ["pwd", "sms", "mfa"])
            #expect(claims["acr"] as? String == "urn:signet:loa:2")
        }
    }

    @Test("three wrong codes kill the code: the fourth try is refused even when right")
    func bruteForce() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (session, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            let code = try await app.lastCode()
            let wrong = code == "000000" ? "111111" : "000000"
            let first = try await app.step("sms_code", session, ["code": wrong])
            #expect(first.status == 401)
            #expect(first.json["attempts_left"] as? Int == 2)
            _ = try await app.step("sms_code", session, ["code": wrong])
            let third = try await app.step("sms_code", session, ["code": wrong])
            #expect(third.json["error"] as? String == "code_attempts_exhausted")
            let fourth = try await app.step("sms_code", session, ["code": code])
            #expect(fourth.status == 403)
            #expect(fourth.json["error"] as? String == "code_attempts_exhausted")
        }
    }

    @Test("a code expires after 5 minutes (injected clock)")
    func expiry() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (session, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            let code = try await app.lastCode()
            provider.clock.advance(by: 301)
            let late = try await app.step("sms_code", session, ["code": code])
            #expect(late.json["error"] as? String == "code_expired")
            #expect(late.json["retryable"] as? Bool == true)
        }
    }

    @Test("resend waits 30 s, replaces the code, and stops after five codes")
    func resendLimits() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (session, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            let firstCode = try await app.lastCode()
            let early = try await app.step("sms_code/resend", session)
            #expect(early.status == 429)
            #expect(early.json["error"] as? String == "resend_too_early")
            #expect(early.header("Retry-After") != nil)
            for sent in 2...5 {
                provider.clock.advance(by: 31)
                let resent = try await app.step("sms_code/resend", session)
                #expect(resent.status == 200, "send \(sent)")
                #expect((resent.json["sms"] as? [String: Any])?["sends_left"] as? Int == 5 - sent)
            }
            provider.clock.advance(by: 31)
            let over = try await app.step("sms_code/resend", session)
            #expect(over.json["error"] as? String == "resend_limit_reached")
            #expect(await provider.outbox.messages.count == 5)
            let latest = try await app.lastCode()
            // The first code was replaced (a repeat of the same six digits would be a 1-in-a-million draw).
            let oldCodeAnswer = try await app.step("sms_code", session, ["code": firstCode]).json["error"] as? String
            #expect(latest == firstCode || oldCodeAnswer == "invalid_code")
            #expect(try await app.step("sms_code", session, ["code": latest]).json["next_step"] as? String == "finished")
        }
    }

    @Test("steps out of order, a finished or expired session, and another client are refused")
    func orderAndOwnership() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let session = try #require(try await app.start().json["login_session"] as? String)
            let early = try await app.step("username_password", session, ["username": "alice", "password": Fixture.password])
            #expect(early.status == 409)
            #expect(early.json["error"] as? String == "wrong_step")
            #expect(early.json["next_step"] as? String == "select_scenario")
            let other = try await app.step("scenario", session, ["scenario": "s_mobile_authn_un_pwd"], clientID: "backend")
            #expect(other.status == 403)
            #expect(other.json["error"] as? String == "client_mismatch")
            _ = try await app.step("scenario", session, ["scenario": "s_mobile_authn_un_pwd"])
            #expect(try await app.step("sms_code", session, ["code": "123456"]).json["error"] as? String == "wrong_step")
            let finished = try await app.step("username_password", session, ["username": "alice", "password": Fixture.password])
            #expect(finished.json["next_step"] as? String == "finished")
            let reused = try await app.step("username_password", session, ["username": "alice", "password": Fixture.password])
            #expect(reused.json["error"] as? String == "invalid_login_session")
            let stale = try #require(try await app.start().json["login_session"] as? String)
            provider.clock.advance(by: 601)
            #expect(try await app.step("scenario", stale, ["scenario": "s_mobile_authn_un_pwd"]).json["error"] as? String == "invalid_login_session")
            #expect(
                try await app.step("scenario", "made-up", ["scenario": "s_mobile_authn_un_pwd"]).json["error"] as? String == "invalid_login_session")
        }
    }

    @Test("a scenario the client may not use is refused")
    func scenarioNotAllowed() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            var record = try #require(try await provider.store.client(id: "app"))
            _ = try await provider.store.deleteClient(id: "app")
            record.loginScenarios = [.usernamePassword]
            try await provider.store.insertClient(record)
            let app = NativeApp(provider)
            let started = try await app.start()
            #expect(started.json["scenarios"] as? [String] == ["s_mobile_authn_un_pwd"])
            let session = try #require(started.json["login_session"] as? String)
            let refused = try await app.step("scenario", session, ["scenario": "s_mobile_authn_un_pwd_sms"])
            #expect(refused.status == 403)
            #expect(refused.json["error"] as? String == "unauthorized_client")
            let twoFactorOnly = try await app.start(extra: ["acr_values": "urn:signet:loa:2"])
            #expect(twoFactorOnly.status == 403)
        }
    }

    @Test("of 20 concurrent password submissions exactly one is applied")
    func concurrentSubmissions() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let session = try #require(try await app.start().json["login_session"] as? String)
            _ = try await app.step("scenario", session, ["scenario": "s_mobile_authn_un_pwd"])
            let answers = try await withThrowingTaskGroup(of: ScriptedResponse.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await app.step("username_password", session, ["username": "alice", "password": Fixture.password]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0.json["next_step"] as? String == "finished" }.count == 1)
            #expect(answers.filter { $0.status == 200 }.count == 1)
        }
    }

    @Test("a failed SMS delivery is a retryable error that keeps the login; a resend then works")
    func deliveryFailure() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            await provider.outbox.failNext(1)
            let app = NativeApp(provider)
            let (session, failed) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            #expect(failed.status == 503)
            #expect(failed.json["error"] as? String == "delivery_failed")
            #expect(failed.json["retryable"] as? Bool == true)
            let noCode = try await app.step("sms_code", session, ["code": "123456"])
            #expect(noCode.json["error"] as? String == "code_not_sent")
            let resent = try await app.step("sms_code/resend", session)
            #expect(resent.status == 200)
            #expect(try await app.step("sms_code", session, ["code": try await app.lastCode()]).json["next_step"] as? String == "finished")
        }
    }

    @Test("the API shares the page's throttle and generic failures")
    func throttleShared() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let unknown = try await app.throughPassword(scenario: .usernamePassword, username: "mallory", password: "x").1
            let wrong = try await app.throughPassword(scenario: .usernamePassword, password: "wrong").1
            #expect(unknown.json["error"] as? String == "invalid_credentials")
            #expect(wrong.json["error"] as? String == "invalid_credentials")
            #expect(unknown.json["error_description"] as? String == wrong.json["error_description"] as? String)
            for _ in 0..<3 {
                _ = try await provider.submitLogin(
                    TestAuthorization(clientID: "app", redirectURI: Fixture.appRedirect), browser: ScriptedBrowser(), username: "alice",
                    password: "wrong")
            }
            _ = try await app.throughPassword(scenario: .usernamePassword, password: "wrong")
            let paused = try await app.throughPassword(scenario: .usernamePassword).1
            #expect(paused.status == 429)
            #expect(paused.json["error"] as? String == "too_many_attempts")
        }
    }

    @Test("a remember token skips the username step but not the password; it is bound to its client and revocable")
    func rememberUser() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (_, finished) = try await app.throughPassword(scenario: .usernamePassword, extra: ["remember_me": true])
            let token = try #require(finished.json["remember_token"] as? String)
            let started = try await app.start(extra: ["remember_token": token])
            #expect(started.json["username"] as? String == "alice")
            let session = try #require(started.json["login_session"] as? String)
            let chosen = try await app.step("scenario", session, ["scenario": "s_mobile_authn_un_pwd"])
            #expect(chosen.json["next_step"] as? String == "password")
            #expect(try await app.step("password", session, ["password": "wrong"]).status == 401)
            #expect(try await app.step("password", session, ["password": Fixture.password]).json["next_step"] as? String == "finished")

            try await provider.admin.updateClient(id: "basic", .init(nativeLogin: true))
            let otherClient = NativeApp(provider, clientID: "basic", redirectURI: Fixture.backendRedirect)
            let refused = try await otherClient.start(extra: ["remember_token": token])
            #expect(refused.json["error"] as? String == "invalid_remember_token")

            #expect(try await provider.admin.forgetDevices(username: "alice") == 1)
            #expect(try await app.start(extra: ["remember_token": token]).json["error"] as? String == "invalid_remember_token")
        }
    }

    @Test("the OpenAPI document is served and describes every step")
    func openAPI() async throws {
        try await withTestProvider { provider in
            let document = try await ScriptedBrowser().get(provider.url("/login/native/openapi.yaml"))
            #expect(document.status == 200)
            for path in ["start", "scenario", "username_password", "password", "sms_code", "sms_code/resend"] {
                #expect(document.body.contains("/login/native/\(path):"), "\(path)")
            }
        }
    }
}

@Suite("Hosted page: the SMS step and remember-me")
struct PageSMSTests {
    func smsFields(_ html: String) -> (String, String)? {
        guard let fields = LoginForm.fields(in: html), html.contains("sms-form") else { return nil }
        return (fields.authorization, fields.csrfToken)
    }

    @Test("acr_values asking for two factors adds the SMS step; wrong codes count; the right one finishes with mfa")
    func pageTwoFactor() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.appAuthorization
            let browser = ScriptedBrowser()
            let afterPassword = try await provider.submitLogin(
                authorization, browser: browser, username: "alice", password: Fixture.password, extra: [("acr_values", "urn:signet:loa:2")])
            #expect(afterPassword.status == 200)
            let (handle, csrf) = try #require(smsFields(afterPassword.body))
            #expect(afterPassword.body.contains("•••• 11"))
            let code = try await NativeApp(provider).lastCode()
            let wrong = try await browser.post(
                provider.url("/login/sms"), form: [("authorization", handle), ("csrf_token", csrf), ("code", code == "000000" ? "111111" : "000000")])
            #expect(wrong.status == 401)
            do {
                #expect(wrong.body.contains("2 tries left"))
                let forged = try await ScriptedBrowser().post(
                    provider.url("/login/sms"), form: [("authorization", handle), ("csrf_token", csrf), ("code", code)])
                #expect(forged.status == 403)
                let right = try await browser.post(
                    provider.url("/login/sms"), form: [("authorization", handle), ("csrf_token", csrf), ("code", code)])
                #expect(right.status == 303)
                let redeemed = try await provider.redeem(
                    try #require(right.locationParameters?["code"]), authorization, clientAuth: [("client_id", "app")])
                let jwks = try await ScriptedBrowser().get(provider.url("/jwks")).decode(PublicJWKS.self)
                let claims = try #require(TestJWS.verifiedES256(try redeemed.decode(TokenResponse.self).idToken!, jwks: jwks)?.claims)
                #expect(claims["amr"] as? [String] == ["pwd", "sms", "mfa"])
            }
        }
    }

    @Test("two factors asked for a user without a phone end in access_denied")
    func noPhone() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            try await provider.admin.addUser(username: "nophone", password: "no phone here")
            let response = try await provider.submitLogin(
                fixture.appAuthorization, browser: ScriptedBrowser(), username: "nophone", password: "no phone here",
                extra: [("acr_values", "urn:signet:loa:2")])
            #expect(response.status == 303)
            #expect(response.locationParameters?["error"] == "access_denied")
        }
    }

    @Test("remember me pre-fills the username next time, never the password; logout with forget_user forgets it")
    func pageRememberMe() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            let page = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer))
            let fields = try #require(LoginForm.fields(in: page.body))
            let done = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "alice"), ("password", Fixture.password),
                    ("remember_me", "on"),
                ])
            #expect(done.status == 303)
            #expect(browser.cookieJar["signet_remember"] != nil)
            browser.setCookie("signet_session", nil)
            let again = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer))
            #expect(again.body.contains(#"value="alice""#))
            #expect(!again.body.contains(Fixture.password))
            // Another client's page is not pre-filled by this client's token.
            let other = try await browser.get(TestAuthorization(clientID: "basic", redirectURI: Fixture.backendRedirect).url(issuer: provider.issuer))
            #expect(!other.body.contains(#"value="alice""#))
            let page2 = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer))
            let fields2 = try #require(LoginForm.fields(in: page2.body))
            _ = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields2.authorization), ("csrf_token", fields2.csrfToken), ("username", "alice"),
                    ("password", Fixture.password), ("remember_me", "on"),
                ])
            let logout = try await browser.get(provider.url("/logout"))
            let token = try #require(LoginForm.hiddenValue("csrf_token", in: logout.body))
            _ = try await browser.post(provider.url("/logout"), form: [("csrf_token", token), ("forget_user", "true")])
            #expect(browser.cookieJar["signet_remember"] == nil)
        }
    }
}

@Suite("Second-factor rules that must not leak")
struct SecondFactorRuleTests {
    @Test("a one-factor browser session does not answer a request for two factors")
    func stepUp() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            _ = try await provider.signIn(fixture.appAuthorization, browser: browser, username: "alice", password: Fixture.password)
            let stepUp = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer, extra: [("acr_values", "urn:signet:loa:2")]))
            #expect(stepUp.status == 200)
            #expect(LoginForm.fields(in: stepUp.body) != nil)
            let discovery = try await ScriptedBrowser().get(provider.url("/.well-known/openid-configuration")).decode(DiscoveryDocument.self)
            #expect(discovery.acrValuesSupported.contains("urn:signet:loa:2"))
        }
    }

    @Test("the native start refuses prompt=none and checks id_token_hint, which then binds the user")
    func nativeHints() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let app = NativeApp(provider)
            #expect(try await app.start(extra: ["prompt": "none"]).json["error"] as? String == "login_required")
            #expect(try await app.start(extra: ["id_token_hint": "not-a-token"]).json["error"] as? String == "invalid_request")
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            try await provider.admin.addUser(username: "bob", password: "bobs passphrase")
            // Another user than the hint names: answered exactly like a wrong password, so no password is confirmed.
            let (_, other) = try await app.throughPassword(
                scenario: .usernamePasswordSMS, username: "bob", password: "bobs passphrase", startExtra: ["id_token_hint": tokens.idToken!])
            #expect(other.json["error"] as? String == "invalid_credentials")
            #expect(await provider.outbox.messages.isEmpty)
            let (_, named) = try await app.throughPassword(scenario: .usernamePassword, startExtra: ["id_token_hint": tokens.idToken!])
            #expect(named.json["next_step"] as? String == "finished")
        }
    }

    @Test("a malformed code is refused without using up a try")
    func malformedCodeNotCounted() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (session, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            for malformed in ["", "12 34", "abcdef", "1234567"] {
                #expect(try await app.step("sms_code", session, ["code": malformed]).json["error"] as? String == "invalid_request")
            }
            let code = try await app.lastCode()
            let wrong = code == "000000" ? "111111" : "000000"
            #expect(try await app.step("sms_code", session, ["code": wrong]).json["attempts_left"] as? Int == 2)
        }
    }

    @Test("failed deliveries count toward the five sends")
    func failedDeliveriesCount() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            await provider.outbox.failNext(10)
            let app = NativeApp(provider)
            let (session, first) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            #expect(first.json["error"] as? String == "delivery_failed")
            for _ in 2...5 {
                #expect(try await app.step("sms_code/resend", session).json["error"] as? String == "delivery_failed")
            }
            let over = try await app.step("sms_code/resend", session)
            #expect(over.json["error"] as? String == "resend_limit_reached")
        }
    }

    @Test("forget_user without a session still asks before forgetting")
    func forgetUserAsks() async throws {
        try await withTestProvider { provider in
            let response = try await ScriptedBrowser().get(provider.url("/logout?forget_user=true"))
            #expect(response.status == 200)
            #expect(response.body.contains("logout-form"))
        }
    }
}
