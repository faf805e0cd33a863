// Limits that hold when requests race: count before check, per-address slots, per-account budgets.
import Foundation
import SignetCore
@testable import SignetServer
import SignetScript
import SignetStore
import SignetTesting
import Testing

@Suite("Limits under parallel requests")
struct ParallelLimitTests {
    /// The stored login behind an API handle.
    func stored(_ provider: TestProvider, _ handle: String) async throws -> LoginSessionRecord? {
        try await provider.store.loginSession(id: SecretDigest.hex(handle))
    }

    static func wrongCode(for code: String) -> String { code == "000000" ? "111111" : "000000" }

    @Test("a request paused between reading and claiming the login is refused, unchecked; the other's guess is counted")
    func pausedClaimLoses() async throws {
        let store = GatedStore()
        try await withTestProvider(store: store) { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (handle, sent) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            #expect(sent.json["next_step"] as? String == "sms_code")
            let code = try await app.lastCode()
            let wrong = Self.wrongCode(for: code)

            store.loginWrites.arm()
            async let paused = app.step("sms_code", handle, ["code": wrong])
            await store.loginWrites.waitUntilPaused()
            // A has read the login and waits before its claim; B claims, is checked and counted.
            let other = try await app.step("sms_code", handle, ["code": wrong])
            #expect(other.status == 401)
            #expect(other.json["attempts_left"] as? Int == 2)
            store.loginWrites.release()
            let late = try await paused
            #expect(late.status == 409)
            #expect(late.oauthError == "concurrent_update")
            #expect(try await stored(provider, handle)?.sms?.attempts == 1)

            #expect(try await app.step("sms_code", handle, ["code": wrong]).json["attempts_left"] as? Int == 1)
            #expect(try await app.step("sms_code", handle, ["code": wrong]).oauthError == "code_attempts_exhausted")
            let right = try await app.step("sms_code", handle, ["code": code])
            #expect(right.oauthError == "code_attempts_exhausted")
            #expect(right.json["authorization_code"] == nil)
            #expect(try await stored(provider, handle)?.sms?.attempts == 3)
        }
    }

    @Test("40 parallel wrong codes over separate connections check at most 3; once 3 are checked the right code is refused")
    func parallelWrongCodesAPI() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let (handle, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            let code = try await app.lastCode()
            let wrong = Self.wrongCode(for: code)
            let answers = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        let response = try await app.step("sms_code", handle, ["code": wrong])
                        return (response.status, response.oauthError)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Checked guesses answer invalid_code (tries left) or, the third, code_attempts_exhausted.
            // A guess that came second to another (concurrent_update) was not checked; how many
            // were depends on timing, never more than 3, and the answers agree with the count.
            #expect(answers.filter { $0.1 == "invalid_code" }.count <= 2)
            #expect(answers.allSatisfy { ["invalid_code", "code_attempts_exhausted", "concurrent_update"].contains($0.1 ?? "") })
            let checked = try #require(try await stored(provider, handle)?.sms?.attempts)
            #expect((1...3).contains(checked))
            #expect(answers.filter { $0.1 == "invalid_code" }.count == min(checked, 2))
            // The guesses that were not checked may be sent again: they count then, up to 3 in all.
            for _ in checked..<3 { _ = try await app.step("sms_code", handle, ["code": wrong]) }
            #expect(try await stored(provider, handle)?.sms?.attempts == 3)
            let right = try await app.step("sms_code", handle, ["code": code])
            #expect(right.oauthError == "code_attempts_exhausted")
            #expect(right.json["authorization_code"] == nil)
        }
    }

    @Test("the hosted page: 40 parallel wrong codes check at most 3; once 3 are checked the right code is refused")
    func parallelWrongCodesPage() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            let page = try await browser.get(fixture.appAuthorization.url(issuer: provider.issuer, extra: [("acr_values", "urn:signet:loa:2")]))
            let fields = try #require(LoginForm.fields(in: page.body))
            let sent = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "alice"), ("password", Fixture.password),
                ])
            #expect(sent.status == 200)
            let message = try #require(await provider.outbox.messages.last)
            let code = String(try #require(message.body.split(separator: "#").last))
            let form: @Sendable (String) -> [(String, String)] = { code in
                [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("code", code)]
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 { group.addTask { try await browser.post(provider.url("/login/sms"), form: form(Self.wrongCode(for: code))).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // 401: checked, tries left; 403: the third checked, or exhausted; 409: came second to
            // another guess, not checked. How many were checked depends on timing, never more than 3.
            #expect(statuses.filter { $0 == 401 }.count <= 2)
            #expect(statuses.allSatisfy { [401, 403, 409].contains($0) })
            let checked = try #require(try await provider.store.loginSession(id: SecretDigest.hex(fields.authorization))?.sms?.attempts)
            #expect((1...3).contains(checked))
            #expect(statuses.filter { $0 == 401 }.count == min(checked, 2))
            // The guesses that were not checked may be sent again: they count then, up to 3 in all.
            for _ in checked..<3 { _ = try await browser.post(provider.url("/login/sms"), form: form(Self.wrongCode(for: code))) }
            #expect(try await provider.store.loginSession(id: SecretDigest.hex(fields.authorization))?.sms?.attempts == 3)
            let right = try await browser.post(provider.url("/login/sms"), form: form(code))
            #expect(right.status == 403)
            #expect(right.header("Location") == nil)
        }
    }

    @Test("50 parallel wrong passwords against 50 names from one address check at most the address's free failures")
    func addressReservedBeforeCheck() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            var handles: [String] = []
            for _ in 0..<50 {
                let started = try await app.start()
                let handle = try #require(started.json["login_session"] as? String)
                _ = try await app.step("scenario", handle, ["scenario": "s_mobile_authn_un_pwd"])
                handles.append(handle)
            }
            let errors = try await withThrowingTaskGroup(of: String?.self) { group in
                for (index, handle) in handles.enumerated() {
                    group.addTask { try await app.step("username_password", handle, ["username": "name\(index)", "password": "guess"]).oauthError }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let free = provider.configuration.throttle.freeFailuresPerAddress
            #expect(errors.filter { $0 == "invalid_credentials" }.count <= free)
            #expect(errors.filter { $0 == "too_many_attempts" }.count >= 50 - free)
        }
    }

    @Test("30 people signing in at once from one address are never paused")
    func legitimateBurstIsNotPaused() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            for index in 0..<30 { _ = try await provider.admin.addUser(username: "user\(index)", password: Fixture.password) }
            let app = NativeApp(provider)
            let outcomes = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<30 {
                    group.addTask {
                        let started = try await app.start()
                        let handle = try #require(started.json["login_session"] as? String)
                        _ = try await app.step("scenario", handle, ["scenario": "s_mobile_authn_un_pwd"])
                        let done = try await app.step("username_password", handle, ["username": "user\(index)", "password": Fixture.password])
                        return done.json["next_step"] as? String ?? done.oauthError
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count == 30)
            #expect(outcomes.allSatisfy { $0 == "finished" }, "\(outcomes)")
        }
    }

    @Test(
        "one account signing in 20 times at once (two devices, a load test) is never paused; parallel guesses against it still stop at the free failures"
    )
    func oneAccountInParallel() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let signIn: @Sendable (String) async throws -> String? = { password in
                let started = try await app.start()
                let handle = try #require(started.json["login_session"] as? String)
                _ = try await app.step("scenario", handle, ["scenario": "s_mobile_authn_un_pwd"])
                let done = try await app.step("username_password", handle, ["username": "alice", "password": password])
                return done.json["next_step"] as? String ?? done.oauthError
            }
            let right = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<20 { group.addTask { try await signIn(Fixture.password) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(right.count == 20)
            #expect(right.allSatisfy { $0 == "finished" }, "\(right)")
            // 20 parallel wrong guesses: at most the 5 free failures are checked, the rest pause.
            _ = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<20 { group.addTask { try await signIn("wrong guess") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let counted = try #require(try await provider.store.throttle(key: LoginThrottle.accountKey("alice")))
            #expect(counted.failures <= provider.configuration.throttle.freeFailuresPerAccount)
            #expect(counted.failures >= 1)
        }
    }

    @Test("at most 10 wrong codes per account a day across logins; a right password does not reset it; retry_after says when")
    func accountWrongCodeBudget() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            var wrongAnswers = 0
            var limited: ScriptedResponse?
            for _ in 0..<4 where limited == nil {
                let (handle, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
                let code = try await app.lastCode()
                for _ in 0..<3 {
                    let answer = try await app.step("sms_code", handle, ["code": Self.wrongCode(for: code)])
                    if answer.oauthError == "account_code_limit" { limited = answer; break }
                    wrongAnswers += 1
                }
                provider.clock.advance(by: 60)
            }
            #expect(wrongAnswers == 10)
            let refusal = try #require(limited)
            #expect(refusal.status == 429)
            #expect((refusal.json["retry_after"] as? Int ?? 0) > 20 * 3600)
            #expect(refusal.header("Retry-After") != nil)
            // Even the right code of a fresh login is refused until the oldest wrong code is a day old.
            let (handle, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            let right = try await app.step("sms_code", handle, ["code": try await app.lastCode()])
            #expect(right.oauthError == "account_code_limit")
            provider.clock.advance(by: 86_400)
            // That login has expired meanwhile; a fresh one finishes.
            #expect(try await app.step("sms_code", handle, ["code": try await app.lastCode()]).oauthError == "invalid_login_session")
            let (fresh, _) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            #expect(try await app.step("sms_code", fresh, ["code": try await app.lastCode()]).json["next_step"] as? String == "finished")
        }
    }

    @Test("at most 10 codes sent per account an hour across logins, failed sends included")
    func accountSendBudget() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            var sends = 0
            var refusal: ScriptedResponse?
            loop: for _ in 0..<3 {
                let (handle, first) = try await app.throughPassword(scenario: .usernamePasswordSMS)
                if first.oauthError == "account_send_limit" { refusal = first; break }
                sends += 1
                for _ in 0..<4 {
                    provider.clock.advance(by: 31)
                    let again = try await app.step("sms_code/resend", handle)
                    if again.oauthError == "account_send_limit" { refusal = again; break loop }
                    sends += 1
                }
            }
            #expect(sends == 10)
            #expect(await provider.outbox.messages.count == 10)
            let refused = try #require(refusal)
            #expect(refused.status == 429)
            let retryAfter = try #require(refused.json["retry_after"] as? Int)
            #expect(retryAfter > 0 && retryAfter <= 3600)
            provider.clock.advance(by: TimeInterval(retryAfter))
            let (_, allowed) = try await app.throughPassword(scenario: .usernamePasswordSMS)
            #expect(allowed.json["next_step"] as? String == "sms_code")
        }
    }
}
