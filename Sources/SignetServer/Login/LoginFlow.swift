// The login as one pure state machine: a stored login and an event in, a transition out.
import Foundation
import SignetCore
import SignetStore

/// Every rule of a login, for every channel (hosted page, native API, and later devices).
///
/// A value with no I/O: it reads the stored ``LoginSessionRecord`` and an ``LoginEvent`` and
/// returns a ``LoginTransition`` (the login to store, and an action). Channels parse requests,
/// run the actions (password checks, sending codes, issuing the authorization code) through
/// ``LoginRunner`` and render the result; time is passed in, so each rule is unit-tested.
///
/// Limits hold under parallel requests because every transition that checks a secret stores
/// its count in the same write that claims the step (count before check): of concurrent
/// submissions one write wins, and the others are answered with a conflict before anything
/// about their guess is revealed.
struct LoginFlow: Sendable {
    let sms: SMSPolicy
    let now: Date
    /// Passwords one login may try before it must start again.
    let passwordAttemptsPerLogin: Int

    init(sms: SMSPolicy, now: Date, passwordAttemptsPerLogin: Int = 10) {
        self.sms = sms
        self.now = now
        self.passwordAttemptsPerLogin = passwordAttemptsPerLogin
    }

    func handle(_ event: LoginEvent, in session: LoginSessionRecord) -> LoginTransition {
        switch event {
        case .chooseScenario(let scenario, let offered): return choose(scenario, offered: offered, in: session)
        case .submitPassword(let username, let rememberMe): return submitPassword(username: username, rememberMe: rememberMe, in: session)
        case .passwordChecked(let check): return passwordChecked(check, in: session)
        case .codeMade(let digest, let phoneNumber): return codeMade(digest: digest, phoneNumber: phoneNumber, in: session)
        case .deliveryFailed: return deliveryFailed(in: session)
        case .requestResend: return requestResend(in: session)
        case .submitCode(let code, let digest): return submitCode(code, digest: digest, in: session)
        case .deviceAssertionVerified(let userID, let instanceID, let acr, let amr):
            return deviceAssertionVerified(userID: userID, instanceID: instanceID, acr: acr, amr: amr, in: session)
        }
    }

    /// Whether the login ends with two factors: the native API's scenario, or the page's request.
    static func needsTwoFactors(_ session: LoginSessionRecord) -> Bool {
        switch session.channel {
        case .api: return session.scenario?.isTwoFactor == true || session.request.requiresTwoFactors
        case .page: return session.request.requiresTwoFactors
        case .device: return true
        }
    }

    /// The scenarios `allowed` for a client that meet the request (two factors when it asks for them).
    static func scenarios(allowed: [LoginScenario], for request: ValidatedAuthorizationRequest) -> [LoginScenario] {
        request.requiresTwoFactors ? allowed.filter(\.isTwoFactor) : allowed
    }

    /// The step that asks for the password.
    private static func passwordStep(_ session: LoginSessionRecord) -> LoginStep {
        session.remembered ? .password : .usernamePassword
    }

    // MARK: scenario

    private func choose(_ scenario: LoginScenario, offered: [LoginScenario], in session: LoginSessionRecord) -> LoginTransition {
        guard session.step == .selectScenario else { return refuse(.wrongStep(expected: session.step)) }
        guard offered.contains(scenario) else { return refuse(.scenarioNotAllowed(scenario)) }
        var next = session
        next.scenario = scenario
        next.step = Self.passwordStep(session)
        return LoginTransition(save: next, action: .show)
    }

    // MARK: password

    private func submitPassword(username: String?, rememberMe: Bool, in session: LoginSessionRecord) -> LoginTransition {
        // A remembered login names its user (step `password`); otherwise the name comes with the password.
        switch (session.step, username) {
        case (.usernamePassword, .some), (.password, .none): break
        default: return refuse(.wrongStep(expected: session.step))
        }
        if let until = session.checkingUntil, until > now { return refuse(.stepInProgress) }
        guard session.passwordAttempts < passwordAttemptsPerLogin else { return abandon(.loginAttemptsExhausted) }
        // The claim carries the attempt: it is counted here, before the password is checked, and
        // holds the step while the check runs, so a parallel submission cannot take it over.
        var next = session
        next.passwordAttempts += 1
        next.rememberMe = rememberMe
        next.checkingUntil = now.addingTimeInterval(Self.checkHold)
        return LoginTransition(save: next, action: .checkPassword(username: username ?? ""))
    }

    /// How long a claimed password check holds the step at most.
    static let checkHold: TimeInterval = 30

    private func passwordChecked(_ check: PasswordCheck, in session: LoginSessionRecord) -> LoginTransition {
        guard session.step == .usernamePassword || session.step == .password else { return refuse(.wrongStep(expected: session.step)) }
        // The check is done: the step is free again.
        var released = session
        released.checkingUntil = nil
        let userID: String, phoneNumber: String?, stamp: String?
        switch check {
        case .paused(let seconds): return LoginTransition(save: released, action: .refuse(.paused(seconds: seconds)))
        case .rejected: return LoginTransition(save: released, action: .refuse(.invalidCredentials))
        case .locked: return LoginTransition(save: released, action: .refuse(.accountLocked))
        case .accepted(let id, let phone, let securityStamp): (userID, phoneNumber, stamp) = (id, phone, securityStamp)
        }
        if session.remembered, session.userID != userID { return abandon(.rememberedUserChanged) }
        if let subject = session.request.idTokenHintSubject, subject != userID { return abandon(.wrongUser) }
        guard Self.needsTwoFactors(session) else {
            return LoginTransition(save: nil, action: .finish(userID: userID, proof: .password(twoFactor: false)))
        }
        guard let phoneNumber else { return abandon(.noSecondFactor) }
        var next = released
        next.userID = userID
        next.userStamp = stamp
        next.step = .smsCode
        return LoginTransition(save: next, action: .makeCode(phoneNumber: phoneNumber))
    }

    // MARK: sending codes

    private func codeMade(digest: String, phoneNumber: String, in session: LoginSessionRecord) -> LoginTransition {
        guard session.step == .smsCode else { return refuse(.wrongStep(expected: session.step)) }
        if let sent = session.sms, sent.sends >= sms.maxSends { return refuse(.resendLimitReached) }
        // The send is recorded before the message goes out, so a failing gateway still counts.
        var next = session
        next.sms = SMSChallenge(
            codeDigest: digest, phoneNumber: phoneNumber, expiresAt: now.addingTimeInterval(sms.lifetime),
            sends: (session.sms?.sends ?? 0) + 1, lastSentAt: now)
        return LoginTransition(save: next, action: .deliver)
    }

    private func deliveryFailed(in session: LoginSessionRecord) -> LoginTransition {
        guard var challenge = session.sms else { return refuse(.codeNotSent) }
        challenge.deliveryFailed = true
        var next = session
        next.sms = challenge
        return LoginTransition(save: next, action: .refuse(.deliveryFailed))
    }

    private func requestResend(in session: LoginSessionRecord) -> LoginTransition {
        guard session.step == .smsCode else { return refuse(.wrongStep(expected: session.step)) }
        // No code yet (the first send was refused by the account's budget): send one now.
        guard let challenge = session.sms else { return LoginTransition(save: nil, action: .makeCode(phoneNumber: nil)) }
        guard challenge.sends < sms.maxSends else { return refuse(.resendLimitReached) }
        if !challenge.deliveryFailed {
            let wait = challenge.lastSentAt.addingTimeInterval(sms.resendAfter).timeIntervalSince(now)
            if wait > 0 { return refuse(.resendTooEarly(seconds: wait)) }
        }
        return LoginTransition(save: nil, action: .makeCode(phoneNumber: challenge.phoneNumber))
    }

    /// Whether another code may be sent in this login.
    func canResend(_ challenge: SMSChallenge) -> Bool { challenge.sends < sms.maxSends }

    // MARK: checking codes

    /// Whether `code` has the form of a code (so a typo in the form is not counted as a guess).
    func isWellFormed(_ code: String) -> Bool {
        code.utf8.count == sms.digits && code.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    private func submitCode(_ code: String, digest: String, in session: LoginSessionRecord) -> LoginTransition {
        guard session.step == .smsCode else { return refuse(.wrongStep(expected: session.step)) }
        guard var challenge = session.sms, !challenge.deliveryFailed else { return refuse(.codeNotSent) }
        guard isWellFormed(code) else { return refuse(.malformedCode(digits: sms.digits)) }
        guard challenge.attempts < sms.maxWrongAttempts else { return refuse(.codeAttemptsExhausted(canResend: canResend(challenge))) }
        guard now < challenge.expiresAt else { return refuse(.codeExpired) }
        guard let userID = session.userID else { return abandon(.codeNotSent) }
        // Count before check: this write claims the step and spends one try, right or wrong.
        challenge.attempts += 1
        var next = session
        next.sms = challenge
        if ConstantTime.equals(digest, session.sms?.codeDigest ?? "") {
            return LoginTransition(save: next, action: .finish(userID: userID, proof: .password(twoFactor: true)), checksCode: true)
        }
        let left = sms.maxWrongAttempts - challenge.attempts
        let refusal: LoginRefusal = left > 0 ? .wrongCode(attemptsLeft: left) : .codeAttemptsExhausted(canResend: canResend(challenge))
        return LoginTransition(save: next, action: .refuse(refusal), checksCode: true)
    }

    // MARK: device login

    /// The device login's one step: the assertion was verified by the channel (it holds the keys
    /// and the store); the login finishes when it came from the device and user it was started for.
    private func deviceAssertionVerified(userID: String, instanceID: String, acr: String, amr: [String], in session: LoginSessionRecord)
        -> LoginTransition
    {
        guard session.channel == .device, session.step == .deviceAssertion else { return refuse(.wrongStep(expected: session.step)) }
        guard session.userID == userID, session.deviceInstanceID == instanceID else { return abandon(.wrongUser) }
        if let subject = session.request.idTokenHintSubject, subject != userID { return abandon(.wrongUser) }
        // An authenticator enrolled after a one-factor login cannot end a login that needs two.
        if session.request.requiresTwoFactors, acr != AuthorizationRequestValidator.acrTwoFactors { return abandon(.noSecondFactor) }
        return LoginTransition(save: nil, action: .finish(userID: userID, proof: .device(instanceID: instanceID, acr: acr, amr: amr)))
    }

    // MARK: helpers

    private func refuse(_ reason: LoginRefusal) -> LoginTransition { LoginTransition(save: nil, action: .refuse(reason)) }
    private func abandon(_ reason: LoginRefusal) -> LoginTransition { LoginTransition(save: nil, action: .abandon(reason)) }
}
