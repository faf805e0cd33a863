// The native login API (MEPi FSi style): the provider's login as steps an app renders itself,
// ending in the same authorization code the browser flow gives.
import Foundation
import Hummingbird
import SignetCore

/// POST /login/native/start, /scenario, /username_password, /password, /sms_code, /sms_code/resend.
///
/// The start takes the same parameters as `/authorize` and checks them with the same
/// ``AuthorizationRequestValidator``. Each later step names the login (`login_session`, a
/// bearer secret) and the client continuing it. A step is applied only from the version of
/// the login it read, so of concurrent submissions exactly one is applied.
struct NativeLoginEndpoint: Sendable {
    let provider: Provider
    let validator: AuthorizationRequestValidator

    var steps: LoginSteps { LoginSteps(provider: provider) }

    // MARK: start

    func start(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let fields = try await body([String: String].self, request, hint: "the start takes string fields only")
        let parameters = FormParameters(fields.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) })
        var authorization: ValidatedAuthorizationRequest
        let client: ClientRecord
        switch try await validator.validate(parameters) {
        case .showError(let error), .redirectError(let error, _, _):
            throw NativeLoginError(
                error.error == .invalidClient ? .unauthorized : .badRequest, error.error.rawValue, error.errorDescription ?? "", retryable: false)
        case .valid(let valid, let found):
            (authorization, client) = (valid, found)
        }
        // A native login always asks the user, so prompt=none cannot be honoured (OIDC Core §3.1.2.6).
        if authorization.prompt.contains("none") {
            throw NativeLoginError(.badRequest, "login_required", "prompt=none cannot be used with the native login", retryable: false)
        }
        if let hint = fields[OAuthParameter.idTokenHint] {
            guard let claims = await provider.verifyIDTokenHint(hint) else {
                throw NativeLoginError(.badRequest, "invalid_request", "id_token_hint is not an ID token issued here", retryable: false)
            }
            authorization.idTokenHintSubject = claims.sub
        }
        var scenarios = client.loginScenarios ?? LoginScenario.allCases
        if authorization.acrValues.contains(AuthorizationRequestValidator.acrTwoFactors) { scenarios = scenarios.filter(\.isTwoFactor) }
        guard !scenarios.isEmpty else {
            throw NativeLoginError(.forbidden, "unauthorized_client", "no login scenario this client may use meets the request", retryable: false)
        }
        var remembered: UserRecord?
        if let token = fields["remember_token"] {
            guard let user = try await RememberTokens(provider: provider).user(for: token, clientID: client.id) else {
                throw NativeLoginError(.badRequest, "invalid_remember_token", "the remember token is unknown, revoked or for another client", retryable: false)
            }
            remembered = user
        }
        let handle = provider.random.token()
        let lifetime = provider.configuration.loginPageLifetime
        let session = LoginSessionRecord(
            id: SecretDigest.hex(handle), channel: .api, request: authorization, step: .selectScenario, userID: remembered?.id,
            remembered: remembered != nil, language: fields["language"], expiresAt: provider.now().addingTimeInterval(lifetime))
        try await provider.store.insertLoginSession(session)
        var response = NativeLoginAnswer(loginSession: handle, nextStep: LoginStep.selectScenario.rawValue, expiresIn: Int(lifetime))
        response.scenarios = scenarios.map(\.rawValue)
        response.username = remembered?.username
        return JSONResponse.make(response, status: .created)
    }

    // MARK: steps

    func selectScenario(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request, at: .selectScenario)
        guard let name = input.scenario, let scenario = LoginScenario(rawValue: name) else {
            throw NativeLoginError(.badRequest, "invalid_request", "scenario must be one of \(LoginScenario.allCases.map(\.rawValue).joined(separator: ", "))", retryable: true)
        }
        let allowed = (client.loginScenarios ?? LoginScenario.allCases).filter {
            !session.request.acrValues.contains(AuthorizationRequestValidator.acrTwoFactors) || $0.isTwoFactor
        }
        guard allowed.contains(scenario) else {
            throw NativeLoginError(.forbidden, "unauthorized_client", "this client may not use the scenario \(name)", retryable: true)
        }
        var next = session
        next.scenario = scenario
        next.step = session.remembered ? .password : .usernamePassword
        next = try await save(next, over: session)
        return answer(next, handle: input.loginSession)
    }

    func usernamePassword(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request, at: .usernamePassword)
        let username = (input.username ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        return try await checkPassword(input, username: username, session: session, client: client, address: context.sourceAddress)
    }

    func password(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request, at: .password)
        guard let userID = session.userID, let user = try await provider.store.user(id: userID) else { throw NativeLoginError.invalidSession }
        return try await checkPassword(input, username: user.username, session: session, client: client, address: context.sourceAddress)
    }

    func smsCode(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, loaded, _) = try await load(request, at: .smsCode)
        guard let sent = loaded.sms, sent.deliveryFailed != true else {
            throw NativeLoginError(.conflict, "code_not_sent", "the code was not delivered; ask for one with sms_code/resend", retryable: true, nextStep: .smsCode)
        }
        guard steps.isWellFormed(input.code ?? "") else {
            throw NativeLoginError(.badRequest, "invalid_request", "code must be \(provider.configuration.sms.digits) digits", retryable: true, nextStep: .smsCode)
        }
        // Claim the step first: of concurrent submissions only one is checked at all.
        let session = try await save(loaded, over: loaded)
        var challenge = sent
        guard let userID = session.userID, let user = try await provider.store.user(id: userID) else { throw NativeLoginError.invalidSession }
        let result = steps.check(input.code ?? "", against: &challenge, session: session.id)
        if result == .accepted {
            return try await finish(session, user: user, twoFactor: true, handle: input.loginSession)
        }
        var next = session
        next.sms = challenge
        next = try await save(next, over: session)
        switch result {
        case .wrong(let left):
            throw NativeLoginError(.unauthorized, "invalid_code", "the code is not right", retryable: true, attemptsLeft: left, nextStep: .smsCode)
        case .exhausted:
            let canAskAgain = steps.canResend(challenge) != .limitReached
            throw NativeLoginError(
                .forbidden, "code_attempts_exhausted", canAskAgain ? "too many wrong codes: ask for a new code" : "too many wrong codes: start again",
                retryable: canAskAgain, attemptsLeft: 0, nextStep: canAskAgain ? .smsCode : nil)
        case .expired:
            throw NativeLoginError(.badRequest, "code_expired", "the code has expired: ask for a new one", retryable: true, nextStep: .smsCode)
        case .accepted:
            return answer(next, handle: input.loginSession)
        }
    }

    func resendCode(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request, at: .smsCode)
        if let challenge = session.sms {
            switch steps.canResend(challenge) {
            case .tooEarly(let seconds):
                throw NativeLoginError(.tooManyRequests, "resend_too_early", "wait before asking for a new code", retryable: true, retryAfter: seconds, nextStep: .smsCode)
            case .limitReached:
                throw NativeLoginError(.tooManyRequests, "resend_limit_reached", "no more codes can be sent in this login; start again", retryable: false)
            case .allowed:
                break
            }
        }
        guard let userID = session.userID, let phoneNumber = try await provider.store.user(id: userID)?.phoneNumber else {
            throw NativeLoginError.invalidSession
        }
        return try await sendCode(session, to: phoneNumber, clientName: client.name, handle: input.loginSession)
    }

    // MARK: shared

    private func checkPassword(_ input: NativeStepRequest, username: String, session loaded: LoginSessionRecord, client: ClientRecord, address: String) async throws -> Response {
        let password = input.password ?? ""
        guard !username.isEmpty, !password.isEmpty, username.utf8.count <= 128, password.utf8.count <= 1024 else {
            throw NativeLoginError(.badRequest, "invalid_request", "username and password are required", retryable: true)
        }
        let session = try await save(loaded, over: loaded)
        let user: UserRecord
        switch try await steps.checkPassword(username: username, password: password, address: address, clientID: client.id) {
        case .paused(let seconds):
            throw NativeLoginError(.tooManyRequests, "too_many_attempts", LoginThrottle.pauseMessage(seconds: seconds), retryable: true, retryAfter: seconds)
        case .rejected:
            throw NativeLoginError(.unauthorized, "invalid_credentials", "the username or password is incorrect", retryable: true)
        case .accepted(let accepted):
            user = accepted
        }
        if session.remembered, session.userID != user.id { throw NativeLoginError.invalidSession }
        var next = session
        next.rememberMe = input.rememberMe ?? false
        next.userID = user.id
        guard session.scenario?.isTwoFactor == true else {
            return try await finish(next, user: user, twoFactor: false, handle: input.loginSession)
        }
        guard let phoneNumber = user.phoneNumber else {
            _ = try await provider.store.consumeLoginSession(id: session.id)
            throw NativeLoginError(.forbidden, "no_second_factor", "this user has no phone number for the SMS step", retryable: false)
        }
        next.step = .smsCode
        next = try await save(next, over: session)
        return try await sendCode(next, to: phoneNumber, clientName: client.name, handle: input.loginSession)
    }

    /// Sends a code (the send is recorded first); a failed delivery keeps the login alive and says to retry.
    private func sendCode(_ session: LoginSessionRecord, to phoneNumber: String, clientName: String, handle: String) async throws -> Response {
        guard let (sent, delivered) = try await steps.deliverCode(session, to: phoneNumber, clientName: clientName) else {
            throw NativeLoginError.concurrentUpdate
        }
        guard delivered else {
            throw NativeLoginError(.serviceUnavailable, "delivery_failed", "the code could not be sent; ask again with sms_code/resend", retryable: true, nextStep: .smsCode)
        }
        return answer(sent, handle: handle)
    }

    private func finish(_ session: LoginSessionRecord, user: UserRecord, twoFactor: Bool, handle: String) async throws -> Response {
        let finished: LoginSteps.Finished
        do {
            finished = try await steps.finish(session, user: user, twoFactor: twoFactor, browserSessionID: nil)
        } catch LoginSteps.FinishFailure.alreadyFinished {
            throw NativeLoginError.invalidSession
        } catch LoginSteps.FinishFailure.wrongUser {
            throw NativeLoginError(.forbidden, "login_required", "the user who signed in is not the one id_token_hint names", retryable: false)
        }
        let parameters = URLComponents(string: finished.location)?.percentEncodedQuery.flatMap(FormParameters.init(encoded:))
        var response = NativeLoginAnswer(nextStep: "finished")
        response.authorizationCode = parameters?[OAuthParameter.code]
        response.state = session.request.state
        response.iss = provider.issuer
        response.redirectURI = session.request.redirectURI
        response.rememberToken = finished.rememberToken
        return JSONResponse.make(response)
    }

    /// The answer naming the next step, with the SMS details when that is next.
    private func answer(_ session: LoginSessionRecord, handle: String) -> Response {
        var response = NativeLoginAnswer(
            loginSession: handle, nextStep: session.step.rawValue, expiresIn: Int(session.expiresAt.timeIntervalSince(provider.now())))
        response.scenario = session.scenario?.rawValue
        if let challenge = session.sms {
            let policy = provider.configuration.sms
            let now = provider.now()
            response.sms = SMSCodeInfo(
                phoneHint: OneTimeCodes.hint(challenge.phoneNumber), digits: policy.digits,
                expiresIn: max(0, Int(challenge.expiresAt.timeIntervalSince(now))),
                resendIn: max(0, Int(challenge.lastSentAt.addingTimeInterval(policy.resendAfter).timeIntervalSince(now).rounded(.up))),
                sendsLeft: max(0, policy.maxSends - challenge.sends))
        }
        return JSONResponse.make(response)
    }

    /// Reads a step's body and its login: live, of this client, at `step`.
    private func load(_ request: Request, at step: LoginStep) async throws -> (NativeStepRequest, LoginSessionRecord, ClientRecord) {
        let input = try await body(NativeStepRequest.self, request, hint: "login_session and client_id are required")
        guard input.loginSession.utf8.count <= 64, let session = try await provider.store.loginSession(id: SecretDigest.hex(input.loginSession)),
            session.channel == .api, session.expiresAt > provider.now()
        else { throw NativeLoginError.invalidSession }
        guard session.request.clientID == input.clientID else { throw NativeLoginError.clientMismatch }
        guard session.step == step else { throw NativeLoginError.wrongStep(expected: session.step) }
        guard let client = try await provider.store.client(id: input.clientID) else { throw NativeLoginError.invalidSession }
        return (input, session, client)
    }

    /// Writes `next` over `current` if nobody changed it since; returns what was written.
    private func save(_ next: LoginSessionRecord, over current: LoginSessionRecord) async throws -> LoginSessionRecord {
        guard let written = try await steps.save(next, over: current) else { throw NativeLoginError.concurrentUpdate }
        return written
    }

    /// Decodes a JSON body of at most the configured size.
    private func body<T: Decodable>(_ type: T.Type, _ request: Request, hint: String) async throws -> T {
        let mediaType = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard mediaType == "application/json" else {
            throw NativeLoginError(.unsupportedMediaType, "invalid_request", "the body must be application/json", retryable: true)
        }
        let buffer = try await request.body.collect(upTo: provider.configuration.maxBodySize)
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: buffer))
        } catch {
            throw NativeLoginError(.badRequest, "invalid_request", "the body is not valid JSON for this step: \(hint)", retryable: true)
        }
    }
}
