// The login's rules as a pure state machine: no HTTP, no store, time passed in.
import Foundation
import SignetCore
import SignetStore
import Testing

@testable import SignetServer

extension LoginSessionRecord {
    /// The same login with the request's acr_values replaced.
    func with(acr: [String]) -> LoginSessionRecord {
        var copy = self
        copy.request.acrValues = acr
        return copy
    }
}

@Suite("LoginFlow: every rule of a login, without HTTP")
struct LoginFlowTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let policy = SMSPolicy()
    var flow: LoginFlow { LoginFlow(sms: policy, now: now) }

    func session(
        step: LoginStep, channel: LoginSessionRecord.Channel = .page, acr: [String] = [], sms: SMSChallenge? = nil, userID: String? = nil,
        remembered: Bool = false
    ) -> LoginSessionRecord {
        LoginSessionRecord(
            id: "login", channel: channel,
            request: ValidatedAuthorizationRequest(
                clientID: "app", redirectURI: "com.example.app:/cb", scope: "openid", state: "s", nonce: nil, codeChallenge: "c", acrValues: acr),
            step: step, userID: userID, remembered: remembered, sms: sms, expiresAt: now.addingTimeInterval(600))
    }

    func challenge(attempts: Int = 0, sends: Int = 1, sentAgo: TimeInterval = 0, expiresIn: TimeInterval = 300, failed: Bool = false) -> SMSChallenge
    {
        SMSChallenge(
            codeDigest: "right", phoneNumber: "+4511111111", expiresAt: now.addingTimeInterval(expiresIn), attempts: attempts, sends: sends,
            lastSentAt: now.addingTimeInterval(-sentAgo), deliveryFailed: failed)
    }

    @Test("a password submission claims the step and counts the attempt before anything is checked")
    func passwordCountedFirst() {
        let transition = flow.handle(.submitPassword(username: "alice", rememberMe: true), in: session(step: .usernamePassword))
        #expect(transition.save?.passwordAttempts == 1)
        #expect(transition.save?.rememberMe == true)
        #expect(transition.action == .checkPassword(username: "alice"))
    }

    @Test("a claimed password check holds the step: a parallel submission is refused until the check is done or the hold runs out")
    func claimHoldsTheStep() throws {
        let claimed = flow.handle(.submitPassword(username: "alice", rememberMe: false), in: session(step: .usernamePassword))
        let held = try #require(claimed.save)
        #expect(held.checkingUntil == now.addingTimeInterval(LoginFlow.checkHold))
        #expect(flow.handle(.submitPassword(username: "bob", rememberMe: false), in: held).action == .refuse(.stepInProgress))
        let later = LoginFlow(sms: policy, now: now.addingTimeInterval(LoginFlow.checkHold + 1))
        #expect(later.handle(.submitPassword(username: "bob", rememberMe: false), in: held).action == .checkPassword(username: "bob"))
        // Whatever the check found, the step is released.
        for check in [PasswordCheck.rejected, .paused(seconds: 30), .locked] {
            let answered = flow.handle(.passwordChecked(check), in: held)
            #expect(answered.save?.checkingUntil == nil)
            #expect(answered.save?.passwordAttempts == 1)
        }
        let twoFactor = flow.handle(
            .passwordChecked(.accepted(userID: "u1", phoneNumber: "+4511111111")), in: held.with(acr: [AuthorizationRequestValidator.acrTwoFactors]))
        #expect(twoFactor.save?.checkingUntil == nil)
    }

    @Test("one login tries at most 10 passwords")
    func passwordsPerLogin() {
        var tired = session(step: .usernamePassword)
        tired.passwordAttempts = 10
        #expect(flow.handle(.submitPassword(username: "alice", rememberMe: false), in: tired).action == .abandon(.loginAttemptsExhausted))
    }

    @Test("the password step of a remembered user takes no name; the username step needs one")
    func stepsAndNames() {
        #expect(
            flow.handle(.submitPassword(username: nil, rememberMe: false), in: session(step: .password, remembered: true)).action
                == .checkPassword(username: ""))
        #expect(
            flow.handle(.submitPassword(username: "bob", rememberMe: false), in: session(step: .password)).action
                == .refuse(.wrongStep(expected: .password)))
        #expect(
            flow.handle(.submitPassword(username: nil, rememberMe: false), in: session(step: .usernamePassword)).action
                == .refuse(.wrongStep(expected: .usernamePassword)))
        #expect(
            flow.handle(.submitPassword(username: "alice", rememberMe: false), in: session(step: .smsCode)).action
                == .refuse(.wrongStep(expected: .smsCode)))
    }

    @Test("a right password finishes with one factor, or moves to the SMS step when two are needed")
    func secondFactorDecision() {
        let accepted = PasswordCheck.accepted(userID: "u1", phoneNumber: "+4511111111")
        #expect(
            flow.handle(.passwordChecked(accepted), in: session(step: .usernamePassword)).action
                == .finish(userID: "u1", proof: .password(twoFactor: false)))
        let twoFactor = flow.handle(
            .passwordChecked(accepted), in: session(step: .usernamePassword, acr: [AuthorizationRequestValidator.acrTwoFactors]))
        #expect(twoFactor.action == .makeCode(phoneNumber: "+4511111111"))
        #expect(twoFactor.save?.step == .smsCode)
        #expect(twoFactor.save?.userID == "u1")
        var minimum = session(step: .usernamePassword)
        minimum.request.minimumACR = AuthorizationRequestValidator.acrTwoFactors
        #expect(flow.handle(.passwordChecked(accepted), in: minimum).action == .makeCode(phoneNumber: "+4511111111"))
        var api = session(step: .usernamePassword, channel: .api)
        api.scenario = .usernamePasswordSMS
        #expect(flow.handle(.passwordChecked(accepted), in: api).action == .makeCode(phoneNumber: "+4511111111"))
        let noPhone = PasswordCheck.accepted(userID: "u1", phoneNumber: nil)
        #expect(flow.handle(.passwordChecked(noPhone), in: api).action == .abandon(.noSecondFactor))
    }

    @Test("wrong and paused password checks are refused; another user than id_token_hint or the remembered one ends the login")
    func passwordRefusals() {
        #expect(flow.handle(.passwordChecked(.rejected), in: session(step: .usernamePassword)).action == .refuse(.invalidCredentials))
        #expect(flow.handle(.passwordChecked(.paused(seconds: 30)), in: session(step: .usernamePassword)).action == .refuse(.paused(seconds: 30)))
        var hinted = session(step: .usernamePassword)
        hinted.request.idTokenHintSubject = "u2"
        #expect(flow.handle(.passwordChecked(.accepted(userID: "u1", phoneNumber: nil)), in: hinted).action == .abandon(.wrongUser))
        let remembered = session(step: .password, userID: "u2", remembered: true)
        #expect(flow.handle(.passwordChecked(.accepted(userID: "u1", phoneNumber: nil)), in: remembered).action == .abandon(.rememberedUserChanged))
    }

    @Test("a code check spends a try in the same write, right or wrong (count before check)")
    func codeCountedFirst() {
        let waiting = session(step: .smsCode, sms: challenge(), userID: "u1")
        let wrong = flow.handle(.submitCode(code: "123456", digest: "wrong"), in: waiting)
        #expect(wrong.save?.sms?.attempts == 1)
        #expect(wrong.checksCode)
        #expect(wrong.action == .refuse(.wrongCode(attemptsLeft: 2)))
        let right = flow.handle(.submitCode(code: "123456", digest: "right"), in: waiting)
        #expect(right.save?.sms?.attempts == 1)
        #expect(right.checksCode)
        #expect(right.action == .finish(userID: "u1", proof: .password(twoFactor: true)))
        let third = flow.handle(.submitCode(code: "123456", digest: "wrong"), in: session(step: .smsCode, sms: challenge(attempts: 2), userID: "u1"))
        #expect(third.action == .refuse(.codeAttemptsExhausted(canResend: true)))
    }

    @Test("after three tries even the right code is refused, and nothing is stored or checked")
    func exhausted() {
        let dead = flow.handle(.submitCode(code: "123456", digest: "right"), in: session(step: .smsCode, sms: challenge(attempts: 3), userID: "u1"))
        #expect(dead.save == nil)
        #expect(dead.checksCode == false)
        #expect(dead.action == .refuse(.codeAttemptsExhausted(canResend: true)))
        let lastSend = flow.handle(
            .submitCode(code: "123456", digest: "right"), in: session(step: .smsCode, sms: challenge(attempts: 3, sends: 5), userID: "u1"))
        #expect(lastSend.action == .refuse(.codeAttemptsExhausted(canResend: false)))
    }

    @Test("malformed, expired and undelivered codes are refused without spending a try")
    func notCounted() {
        for (code, state, expected) in [
            ("12345", challenge(), LoginRefusal.malformedCode(digits: 6)),
            ("12345a", challenge(), .malformedCode(digits: 6)),
            ("１２３４５６", challenge(), .malformedCode(digits: 6)),
            ("123456", challenge(expiresIn: -1), .codeExpired),
            ("123456", challenge(failed: true), .codeNotSent),
        ] {
            let transition = flow.handle(.submitCode(code: code, digest: "right"), in: session(step: .smsCode, sms: state, userID: "u1"))
            #expect(transition.save == nil)
            #expect(transition.action == .refuse(expected))
        }
    }

    @Test("resends wait 30 s (not after a failed delivery), stop at five, and a made code is recorded before it is sent")
    func resends() {
        #expect(
            flow.handle(.requestResend, in: session(step: .smsCode, sms: challenge(sentAgo: 10), userID: "u1")).action
                == .refuse(.resendTooEarly(seconds: 20)))
        #expect(
            flow.handle(.requestResend, in: session(step: .smsCode, sms: challenge(sentAgo: 30), userID: "u1")).action
                == .makeCode(phoneNumber: "+4511111111"))
        #expect(
            flow.handle(.requestResend, in: session(step: .smsCode, sms: challenge(sentAgo: 1, failed: true), userID: "u1")).action
                == .makeCode(phoneNumber: "+4511111111"))
        #expect(
            flow.handle(.requestResend, in: session(step: .smsCode, sms: challenge(sends: 5, sentAgo: 60), userID: "u1")).action
                == .refuse(.resendLimitReached))
        #expect(flow.handle(.requestResend, in: session(step: .smsCode, userID: "u1")).action == .makeCode(phoneNumber: nil))
        let made = flow.handle(
            .codeMade(digest: "new", phoneNumber: "+4511111111"),
            in: session(step: .smsCode, sms: challenge(attempts: 3, sends: 2, sentAgo: 60), userID: "u1"))
        #expect(made.action == .deliver)
        #expect(
            made.save?.sms
                == SMSChallenge(
                    codeDigest: "new", phoneNumber: "+4511111111", expiresAt: now.addingTimeInterval(300), attempts: 0, sends: 3, lastSentAt: now))
        let failed = flow.handle(.deliveryFailed, in: made.save!)
        #expect(failed.save?.sms?.deliveryFailed == true)
        #expect(failed.action == .refuse(.deliveryFailed))
    }

    @Test("scenarios: only offered ones, only at their step; two factors asked for keep only the SMS scenario")
    func scenarios() {
        let start = session(step: .selectScenario, channel: .api)
        let chosen = flow.handle(.chooseScenario(.usernamePassword, offered: LoginScenario.allCases), in: start)
        #expect(chosen.save?.step == .usernamePassword)
        #expect(chosen.save?.scenario == .usernamePassword)
        #expect(
            flow.handle(.chooseScenario(.usernamePassword, offered: [.usernamePasswordSMS]), in: start).action
                == .refuse(.scenarioNotAllowed(.usernamePassword)))
        let remembered = session(step: .selectScenario, channel: .api, userID: "u1", remembered: true)
        #expect(flow.handle(.chooseScenario(.usernamePassword, offered: LoginScenario.allCases), in: remembered).save?.step == .password)
        #expect(
            flow.handle(.chooseScenario(.usernamePassword, offered: LoginScenario.allCases), in: session(step: .smsCode)).action
                == .refuse(.wrongStep(expected: .smsCode)))
        let request = session(step: .selectScenario, acr: [AuthorizationRequestValidator.acrTwoFactors]).request
        #expect(LoginFlow.scenarios(allowed: LoginScenario.allCases, for: request) == [.usernamePasswordSMS])
    }
}
