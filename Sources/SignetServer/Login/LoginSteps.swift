// The steps every login shares, on the hosted page and through the native API: one implementation.
import Foundation
import SignetCore

/// Password checks (throttled), SMS one-time codes, and finishing a login with an authorization code.
struct LoginSteps: Sendable {
    let provider: Provider

    var throttle: LoginThrottle {
        LoginThrottle(store: provider.store, policy: provider.configuration.throttle, clock: provider.clock)
    }
    var policy: SMSPolicy { provider.configuration.sms }

    /// What a password check found.
    enum PasswordResult: Sendable {
        case accepted(UserRecord)
        /// Wrong name or password; deliberately not which.
        case rejected
        case paused(seconds: TimeInterval)
    }

    /// Checks a name and password, counting the attempt first (see ``LoginThrottle``).
    func checkPassword(username: String, password: String, address: String, clientID: String) async throws -> PasswordResult {
        if case .paused(let seconds) = try await throttle.reserve(username: username, address: address) {
            return .paused(seconds: seconds)
        }
        let user = try await provider.store.user(username: username)
        guard await provider.passwords.verify(password, hash: user?.passwordHash), let user else {
            try await throttle.recordFailure(address: address)
            provider.logger.info("login failed", metadata: ["event": "login.failed", "client_id": .string(clientID)])
            return .rejected
        }
        try await throttle.recordSuccess(username: username)
        return .accepted(user)
    }

    /// Writes `next` over `current` if nobody changed the login since `current` was read;
    /// `nil` when another request came first. Every step claims the login this way before it
    /// does anything, so of concurrent submissions exactly one is checked and applied.
    func save(_ next: LoginSessionRecord, over current: LoginSessionRecord) async throws -> LoginSessionRecord? {
        var written = next
        written.version = current.version + 1
        return try await provider.store.replaceLoginSession(written, expectedVersion: current.version) ? written : nil
    }

    /// Sends a fresh code, recording the send *before* it goes out (so neither parallel requests
    /// nor failing gateways can exceed the limits); returns the login as stored and whether the
    /// message was delivered. `nil` when another request changed the login first.
    func deliverCode(_ session: LoginSessionRecord, to phoneNumber: String, clientName: String) async throws -> (LoginSessionRecord, delivered: Bool)? {
        let code = OneTimeCodes.make(digits: policy.digits, random: provider.random)
        let now = provider.now()
        var reserved = session
        reserved.sms = SMSChallenge(
            codeDigest: OneTimeCodes.digest(code, session: session.id, key: provider.otpKey), phoneNumber: phoneNumber,
            expiresAt: now.addingTimeInterval(policy.lifetime), sends: (session.sms?.sends ?? 0) + 1, lastSentAt: now)
        guard let stored = try await save(reserved, over: session) else { return nil }
        let message = OutgoingMessage(
            id: provider.random.token(byteCount: 16), to: phoneNumber,
            body: OneTimeCodes.message(code: code, clientName: clientName, issuer: provider.issuer), purpose: "login_otp", createdAt: now)
        do {
            try await provider.messages.send(message)
            return (stored, true)
        } catch {
            provider.logger.warning("SMS delivery failed", metadata: ["event": "sms.failed", "error": .string(String(describing: error))])
            var failed = stored
            failed.sms?.deliveryFailed = true
            return (try await save(failed, over: stored) ?? stored, false)
        }
    }

    /// Whether another code may be sent now.
    enum ResendCheck: Sendable, Equatable {
        case allowed
        case tooEarly(seconds: TimeInterval)
        case limitReached
    }

    func canResend(_ challenge: SMSChallenge) -> ResendCheck {
        guard challenge.sends < policy.maxSends else { return .limitReached }
        if challenge.deliveryFailed == true { return .allowed }
        let wait = challenge.lastSentAt.addingTimeInterval(policy.resendAfter).timeIntervalSince(provider.now())
        return wait > 0 ? .tooEarly(seconds: wait) : .allowed
    }

    /// What a submitted code was.
    enum CodeResult: Sendable, Equatable {
        case accepted
        case wrong(attemptsLeft: Int)
        /// Too many wrong tries: this code is dead, even if the next guess were right.
        case exhausted
        case expired
    }

    /// Whether `code` has the form of a code (so a typo in the form is not counted as a guess).
    func isWellFormed(_ code: String) -> Bool {
        code.count == policy.digits && code.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Checks a code in constant time, counting a wrong one in `challenge`.
    func check(_ code: String, against challenge: inout SMSChallenge, session: String) -> CodeResult {
        guard challenge.wrongAttempts < policy.maxWrongAttempts else { return .exhausted }
        guard provider.now() < challenge.expiresAt else { return .expired }
        let wellFormed = isWellFormed(code)
        let candidate = OneTimeCodes.digest(wellFormed ? code : "", session: session, key: provider.otpKey)
        if wellFormed, ConstantTime.equals(candidate, challenge.codeDigest) { return .accepted }
        challenge.wrongAttempts += 1
        let left = policy.maxWrongAttempts - challenge.wrongAttempts
        return left > 0 ? .wrong(attemptsLeft: left) : .exhausted
    }

    /// A finished login.
    struct Finished: Sendable {
        /// The redirect URL with `code`, `state` and `iss`.
        var location: String
        /// A Remember-User-ID token, when one was asked for.
        var rememberToken: String?
    }

    /// Why a login could not finish.
    enum FinishFailure: Error {
        /// Another request finished (or abandoned) this login first.
        case alreadyFinished
        /// `id_token_hint` named someone else (OIDC Core §3.1.2.1).
        case wrongUser
    }

    /// Ends the login: consumes the session (exactly once) and issues the authorization code
    /// (and a remember token when `session.rememberMe`, as the caller last decided it),
    /// bound exactly as any other code, with `acr`/`amr` telling what was used.
    func finish(_ session: LoginSessionRecord, user: UserRecord, twoFactor: Bool, browserSessionID: String?) async throws -> Finished {
        if let subject = session.request.idTokenHintSubject, subject != user.id {
            _ = try await provider.store.consumeLoginSession(id: session.id)
            throw FinishFailure.wrongUser
        }
        guard let consumed = try await provider.store.consumeLoginSession(id: session.id) else { throw FinishFailure.alreadyFinished }
        let authentication = Self.authentication(user: user, twoFactor: twoFactor, at: provider.now(), sessionID: browserSessionID)
        let location = try await provider.issueCode(for: consumed.request, authentication: authentication)
        var rememberToken: String?
        if session.rememberMe {
            rememberToken = try await RememberTokens(provider: provider).issue(clientID: consumed.request.clientID, userID: user.id)
        }
        provider.logger.info(
            "login succeeded",
            metadata: ["event": "login.succeeded", "client_id": .string(consumed.request.clientID), "sub": .string(user.id), "factors": .stringConvertible(twoFactor ? 2 : 1)])
        return Finished(location: location, rememberToken: rememberToken)
    }

    /// `acr` and `amr` for what was used (RFC 8176 values).
    static func authentication(user: UserRecord, twoFactor: Bool, at time: Date, sessionID: String?) -> Authentication {
        twoFactor
            ? Authentication(userID: user.id, time: time, acr: AuthorizationRequestValidator.acrTwoFactors, amr: ["pwd", "sms", "mfa"], sessionID: sessionID)
            : Authentication(userID: user.id, time: time, acr: AuthorizationRequestValidator.acrOneFactor, amr: ["pwd"], sessionID: sessionID)
    }
}

/// Remember-User-ID tokens (NemID): opaque, bound to one client and one user, revocable,
/// and never a credential: they only pre-fill or skip the username.
struct RememberTokens: Sendable {
    let provider: Provider

    func issue(clientID: String, userID: String) async throws -> String {
        let token = provider.random.token()
        let now = provider.now()
        try await provider.store.insertRememberToken(
            RememberTokenRecord(
                tokenHash: SecretDigest.hex(token), clientID: clientID, userID: userID, createdAt: now,
                expiresAt: now.addingTimeInterval(provider.configuration.rememberTokenLifetime)))
        return token
    }

    /// The user a token remembers for `clientID`; `nil` for unknown, expired or another client's tokens.
    func user(for token: String, clientID: String) async throws -> UserRecord? {
        guard token.utf8.count <= 128, let record = try await provider.store.rememberToken(hash: SecretDigest.hex(token)),
            record.clientID == clientID, record.expiresAt > provider.now()
        else { return nil }
        return try await provider.store.user(id: record.userID)
    }

    func revoke(_ token: String) async throws {
        guard token.utf8.count <= 128 else { return }
        try await provider.store.deleteRememberToken(hash: SecretDigest.hex(token))
    }
}
