// The native login API (MEPi FSi style): the provider's login as steps an app renders itself,
// ending in the same authorization code the browser flow gives.
import Foundation
import Hummingbird
import NIOCore
import SignetCore
import SignetStore

/// POST /login/native/start, /scenario, /username_password, /password, /sms_code, /sms_code/resend.
///
/// The start takes the same parameters as `/authorize` and checks them with the same
/// ``AuthorizationRequestValidator``. Each later step names the login (`login_session`, a
/// bearer secret) and the client continuing it. A step is applied only from the version of
/// the login it read, so of concurrent submissions exactly one is applied.
struct NativeLoginEndpoint: Sendable {
    let server: ServerContext
    let clients: any ClientStore
    /// Logins in progress.
    let logins: any GrantStore
    let rememberTokens: RememberTokens
    let runner: LoginRunner
    let loginSessions: LoginSessions
    let requests: AuthorizationRequestReader
    let smsPolicy: SMSPolicy
    let loginPageLifetime: TimeInterval
    let maxBodySize: Int

    // MARK: start

    func start(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let fields = try await body([String: String].self, request, hint: "the start takes string fields only")
        let parameters = FormParameters(fields.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) })
        // The /authorize parameters, or a request object signed on the service's backend (RFC 9101).
        let authorization: ValidatedAuthorizationRequest
        let client: ClientRecord
        switch try await requests.read(parameters, from: .native).decision {
        case .showError(let error), .redirectError(let error, _, _):
            throw APIError(
                error.error == .invalidClient ? .unauthorized : .badRequest, error.error.rawValue, error.errorDescription ?? "", retryable: false)
        case .valid(let valid, let found):
            (authorization, client) = (valid, found)
        }
        // The API hands out codes without a redirect, so only clients registered for it may use it.
        guard client.nativeLogin else {
            throw APIError(.forbidden, "unauthorized_client", "this client is not registered for the native login", retryable: false)
        }
        // A native login always asks the user, so prompt=none cannot be honoured (OIDC Core §3.1.2.6).
        if authorization.prompt.contains("none") {
            throw APIError(.badRequest, "login_required", "prompt=none cannot be used with the native login", retryable: false)
        }
        let scenarios = LoginFlow.scenarios(allowed: client.loginScenarios ?? LoginScenario.allCases, for: authorization)
        guard !scenarios.isEmpty else {
            throw APIError(.forbidden, "unauthorized_client", "no login scenario this client may use meets the request", retryable: false)
        }
        var remembered: UserRecord?
        if let token = fields["remember_token"] {
            guard let user = try await rememberTokens.user(for: token, clientID: client.id) else {
                throw APIError(
                    .badRequest, "invalid_remember_token", "the remember token is unknown, revoked or for another client", retryable: false)
            }
            remembered = user
        }
        let lifetime = loginPageLifetime
        let (_, handle) = try await loginSessions.start(
            .api(rememberedUserID: remembered?.id, language: fields["language"]), request: authorization, lifetime: lifetime)
        var response = NativeLoginAnswer(loginSession: handle, nextStep: .selectScenario, expiresIn: Int(lifetime))
        response.scenarios = scenarios
        response.username = remembered?.username
        return JSONResponse.make(response, status: .created)
    }

    // MARK: steps

    func selectScenario(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request)
        guard let name = input.scenario, let scenario = LoginScenario(rawValue: name) else {
            throw APIError(
                .badRequest, "invalid_request", "scenario must be one of \(LoginScenario.allCases.map(\.rawValue).joined(separator: ", "))",
                retryable: true)
        }
        let offered = LoginFlow.scenarios(allowed: client.loginScenarios ?? LoginScenario.allCases, for: session.request)
        return try render(
            await runner.chooseScenario(scenario, offered: offered, on: session, context: loginContext(context, client)), handle: input.loginSession)
    }

    func usernamePassword(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request)
        let username = (input.username ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let password = input.password ?? ""
        guard session.step != .usernamePassword || (!username.isEmpty && username.utf8.count <= 128), !password.isEmpty, password.utf8.count <= 1024
        else {
            throw APIError(.badRequest, "invalid_request", "username and password are required", retryable: true)
        }
        let outcome = try await runner.submitPassword(
            username: username, password: password, rememberMe: input.rememberMe ?? false, on: session, context: loginContext(context, client))
        return try render(outcome, handle: input.loginSession)
    }

    func password(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request)
        let password = input.password ?? ""
        guard !password.isEmpty, password.utf8.count <= 1024 else {
            throw APIError(.badRequest, "invalid_request", "password is required", retryable: true)
        }
        let outcome = try await runner.submitPassword(
            username: nil, password: password, rememberMe: input.rememberMe ?? false, on: session, context: loginContext(context, client))
        return try render(outcome, handle: input.loginSession)
    }

    func smsCode(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request)
        return try render(await runner.submitCode(input.code ?? "", on: session, context: loginContext(context, client)), handle: input.loginSession)
    }

    func resendCode(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (input, session, client) = try await load(request)
        return try render(await runner.resend(on: session, context: loginContext(context, client)), handle: input.loginSession)
    }

    // MARK: shared

    private func loginContext(_ context: SignetRequestContext, _ client: ClientRecord) -> LoginContext {
        LoginContext(address: context.sourceAddress, clientName: client.name, browserSessionID: nil)
    }

    /// The answer for an outcome: the next step, the finished login, or the error.
    private func render(_ outcome: LoginOutcome, handle: String) throws -> Response {
        switch outcome {
        case .show(let session):
            if session.sms?.deliveryFailed == true { throw APIError(refusal: .deliveryFailed, sms: smsPolicy) }
            return answer(session, handle: handle)
        case .refused(let reason, _), .abandoned(let reason, _):
            throw APIError(refusal: reason, sms: smsPolicy)
        case .conflict:
            throw APIError.concurrentUpdate
        case .finished(let finished):
            return JSONResponse.make(NativeLoginAnswer(finished: finished, issuer: server.issuer))
        }
    }

    /// The answer naming the next step, with the SMS details when that is next.
    private func answer(_ session: LoginSessionRecord, handle: String) -> Response {
        var response = NativeLoginAnswer(
            loginSession: handle, nextStep: session.step, expiresIn: Int(session.expiresAt.timeIntervalSince(server.now())))
        response.scenario = session.scenario
        if let challenge = session.sms {
            let policy = smsPolicy
            let now = server.now()
            response.sms = SMSCodeInfo(
                phoneHint: OneTimeCodes.hint(challenge.phoneNumber), digits: policy.digits,
                expiresIn: max(0, Int(challenge.expiresAt.timeIntervalSince(now))),
                resendIn: max(0, Int(challenge.lastSentAt.addingTimeInterval(policy.resendAfter).timeIntervalSince(now).rounded(.up))),
                sendsLeft: max(0, policy.maxSends - challenge.sends))
        }
        return JSONResponse.make(response)
    }

    /// Reads a step's body and its login: live, and of this client (the flow checks the step).
    private func load(_ request: Request) async throws -> (NativeStepRequest, LoginSessionRecord, ClientRecord) {
        let input = try await body(NativeStepRequest.self, request, hint: "login_session and client_id are required")
        let session: LoginSessionRecord
        let client: ClientRecord
        switch try await loginSessions.load(handle: input.loginSession, channel: .api) {
        case .none: throw APIError.invalidSession
        case .clientGone(let stored):
            guard stored.request.clientID == input.clientID else { throw APIError.clientMismatch }
            throw APIError.invalidSession
        case .live(let live, let registered): (session, client) = (live, registered)
        }
        guard session.request.clientID == input.clientID else { throw APIError.clientMismatch }
        // The client's registration as it is now: still allowed here (its minimum assurance is applied by the load).
        guard client.nativeLogin else {
            throw APIError(.forbidden, "unauthorized_client", "this client is not registered for the native login", retryable: false)
        }
        return (input, session, client)
    }

    /// Decodes a JSON body of at most the configured size.
    private func body<T: Decodable>(_ type: T.Type, _ request: Request, hint: String) async throws -> T {
        let mediaType = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard mediaType == "application/json" else {
            throw APIError(.unsupportedMediaType, "invalid_request", "the body must be application/json", retryable: true)
        }
        let data: Data
        do { data = try await JSONRequestBody.read(request, limit: maxBodySize) } catch let refusal as JSONRequestBody.Refusal {
            throw refusal.apiError
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw APIError(.badRequest, "invalid_request", "the body is not valid JSON for this step: \(hint)", retryable: true)
        }
    }
}
