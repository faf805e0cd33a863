// The hosted login page: GET shows it (from /authorize); POST /login checks the password;
// POST /login/sms and /login/sms/resend handle the SMS one-time code.
import Foundation
import Hummingbird
import SignetCore

/// The hosted page's steps, on top of the shared ``LoginSteps``.
struct LoginPage: Sendable {
    let provider: Provider
    let pages: PageRenderer
    let sessions: BrowserSessions

    var steps: LoginSteps { LoginSteps(provider: provider) }
    /// Holds a Remember-User-ID token for the page.
    static let rememberCookie = "signet_remember"

    /// Stores the login, binds it to this browser, and shows the form (pre-filled for a remembered user).
    func start(_ authorization: ValidatedAuthorizationRequest, client: ClientRecord, request: Request) async throws -> Response {
        let binding = sessions.browserBinding(request)
        let handle = provider.random.token()
        let session = LoginSessionRecord(
            id: SecretDigest.hex(handle), channel: .page, request: authorization, browserBindingHash: SecretDigest.hex(binding.value),
            csrfToken: provider.random.token(), step: .usernamePassword,
            expiresAt: provider.now().addingTimeInterval(provider.configuration.loginPageLifetime))
        try await provider.store.insertLoginSession(session)
        var username = authorization.loginHint
        var remembered = false
        if username == nil, let token = request.cookies[Self.rememberCookie]?.value,
            let user = try await RememberTokens(provider: provider).user(for: token, clientID: client.id)
        {
            username = user.username
            remembered = true
        }
        var response = form(session, handle: handle, clientName: client.name, username: username, rememberMe: remembered, error: nil, status: .ok)
        if let cookie = binding.cookie { response.setCookie(cookie) }
        return response
    }

    /// POST /login: the username and password.
    func submit(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let loaded = try await load(request, expecting: .usernamePassword)
        guard case .loaded(let session, let handle, let parameters, let client) = loaded else { return loaded.response! }
        let username = (parameters["username"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let password = parameters["password"] ?? ""
        let rememberMe = parameters["remember_me"] == "on"
        func again(_ error: String, _ status: HTTPResponse.Status) -> Response {
            form(session, handle: handle, clientName: client.name, username: String(username.prefix(128)), rememberMe: rememberMe, error: error, status: status)
        }
        guard !username.isEmpty, !password.isEmpty, username.utf8.count <= 128, password.utf8.count <= 1024 else {
            return again("Enter your username and password.", .badRequest)
        }
        // Claim the login first: of parallel posts of this form only one goes on.
        guard let claimed = try await steps.save(session, over: session) else { return conflict() }
        let user: UserRecord
        switch try await steps.checkPassword(username: username, password: password, address: context.sourceAddress, clientID: client.id) {
        case .paused(let seconds): return again(LoginThrottle.pauseMessage(seconds: seconds), .tooManyRequests)
        case .rejected: return again("The username or password is incorrect.", .unauthorized)
        case .accepted(let accepted): user = accepted
        }

        // Two factors when the client asks for them (acr_values) — the SMS code.
        guard claimed.request.acrValues.contains(AuthorizationRequestValidator.acrTwoFactors) else {
            return try await finish(claimed, user: user, twoFactor: false, rememberMe: rememberMe, request: request, client: client)
        }
        guard let phoneNumber = user.phoneNumber else {
            _ = try await provider.store.consumeLoginSession(id: claimed.id)
            return redirectError(claimed, OAuthError(.accessDenied, "two factors are required and this user has no phone number"))
        }
        var next = claimed
        next.step = .smsCode
        next.userID = user.id
        next.rememberMe = rememberMe
        guard let (sent, delivered) = try await steps.deliverCode(next, to: phoneNumber, clientName: client.name) else { return conflict() }
        return smsForm(sent, handle: handle, error: delivered ? nil : Self.deliveryFailed, status: delivered ? .ok : .serviceUnavailable)
    }

    /// POST /login/sms: the one-time code.
    func submitCode(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let loaded = try await load(request, expecting: .smsCode)
        guard case .loaded(let session, let handle, let parameters, let client) = loaded else { return loaded.response! }
        guard var challenge = session.sms, let userID = session.userID, let user = try await provider.store.user(id: userID) else {
            return pages.message(heading: "This sign-in has expired", message: "Go back to the app and start signing in again.", status: .badRequest)
        }
        let code = (parameters["code"] ?? "").trimmingCharacters(in: .whitespaces)
        if challenge.deliveryFailed == true { return smsForm(session, handle: handle, error: Self.deliveryFailed, status: .conflict) }
        guard steps.isWellFormed(code) else {
            return smsForm(session, handle: handle, error: "Enter the \(provider.configuration.sms.digits)-digit code.", status: .badRequest)
        }
        // Claim first: of parallel posts only one is checked, so the try limit holds.
        guard let claimed = try await steps.save(session, over: session) else { return conflict() }
        let result = steps.check(code, against: &challenge, session: claimed.id)
        if result == .accepted {
            return try await finish(claimed, user: user, twoFactor: true, rememberMe: claimed.rememberMe, request: request, client: client)
        }
        var next = claimed
        next.sms = challenge
        guard let stored = try await steps.save(next, over: claimed) else { return conflict() }
        switch result {
        case .wrong(let left):
            return smsForm(stored, handle: handle, error: "The code is not right. \(left) \(left == 1 ? "try" : "tries") left.", status: .unauthorized)
        case .exhausted:
            return smsForm(stored, handle: handle, error: "Too many wrong codes. Send a new code to try again.", status: .forbidden)
        case .expired:
            return smsForm(stored, handle: handle, error: "The code has expired. Send a new code.", status: .badRequest)
        case .accepted:
            return smsForm(stored, handle: handle, error: nil, status: .ok)
        }
    }

    /// POST /login/sms/resend: a new code, within the resend rules.
    func resend(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let loaded = try await load(request, expecting: .smsCode)
        guard case .loaded(let session, let handle, _, let client) = loaded, let challenge = session.sms else {
            return loaded.response ?? pages.message(heading: "This sign-in has expired", message: "Start again.", status: .badRequest)
        }
        switch steps.canResend(challenge) {
        case .tooEarly(let seconds):
            return smsForm(session, handle: handle, error: "Wait \(Int(seconds.rounded(.up))) seconds before asking for a new code.", status: .tooManyRequests)
        case .limitReached:
            return smsForm(session, handle: handle, error: "No more codes can be sent. Go back to the app and start again.", status: .tooManyRequests)
        case .allowed:
            break
        }
        guard let (sent, delivered) = try await steps.deliverCode(session, to: challenge.phoneNumber, clientName: client.name) else { return conflict() }
        return smsForm(sent, handle: handle, error: delivered ? nil : Self.deliveryFailed, status: delivered ? .ok : .serviceUnavailable)
    }

    static let deliveryFailed = "We could not send the code. Use “Send a new code” to try again."

    private func conflict() -> Response {
        pages.message(heading: "This sign-in changed in another window", message: "Go back to the app and start again.", status: .conflict)
    }

    // MARK: Shared

    /// A form post read and checked: the session exists, is live, is at `step`, came from this browser with the CSRF token.
    enum Loaded {
        case loaded(LoginSessionRecord, handle: String, FormParameters, ClientRecord)
        case refused(Response)
        var response: Response? {
            if case .refused(let response) = self { return response }
            return nil
        }
    }

    func load(_ request: Request, expecting step: LoginStep) async throws -> Loaded {
        let parameters: FormParameters
        do {
            parameters = try await RequestParameters.form(request, maxBodySize: provider.configuration.maxBodySize)
        } catch let error as OAuthHTTPError {
            return .refused(pages.message(heading: "The sign-in form could not be read", message: error.error.errorDescription ?? "", status: error.status))
        }
        guard parameters.duplicatedNames.isEmpty else {
            return .refused(pages.message(heading: "The sign-in form could not be read", message: "A field was sent twice.", status: .badRequest))
        }
        guard let handle = parameters["authorization"], handle.utf8.count <= 64,
            let session = try await provider.store.loginSession(id: SecretDigest.hex(handle)), session.channel == .page,
            session.expiresAt > provider.now()
        else {
            return .refused(pages.message(heading: "This sign-in has expired", message: "Go back to the app and start signing in again.", status: .badRequest))
        }
        // CSRF: the form's token must match, and the form must come back to the browser it was shown in.
        let browser = request.cookies[BrowserSessions.browserCookie]?.value ?? ""
        guard let csrf = parameters["csrf_token"], let expected = session.csrfToken, ConstantTime.equals(csrf, expected),
            let binding = session.browserBindingHash, ConstantTime.equals(SecretDigest.hex(browser), binding)
        else {
            return .refused(
                pages.message(
                    heading: "The sign-in form was rejected",
                    message: "The form was not sent from the sign-in page in this browser. Go back to the app and start again.", status: .forbidden))
        }
        guard session.step == step else {
            return .refused(pages.message(heading: "This step is already done", message: "Go back to the app and start signing in again.", status: .conflict))
        }
        guard let client = try await provider.store.client(id: session.request.clientID) else {
            return .refused(pages.message(heading: "This sign-in has expired", message: "The app is no longer registered.", status: .badRequest))
        }
        return .loaded(session, handle: handle, parameters, client)
    }

    /// Issues the code, then starts the browser session and redirects; sets or clears the remember cookie.
    private func finish(_ session: LoginSessionRecord, user: UserRecord, twoFactor: Bool, rememberMe: Bool, request: Request, client: ClientRecord) async throws -> Response {
        var session = session
        session.rememberMe = rememberMe
        let sid = provider.random.token(byteCount: 16)
        let finished: LoginSteps.Finished
        do {
            finished = try await steps.finish(session, user: user, twoFactor: twoFactor, browserSessionID: sid)
        } catch LoginSteps.FinishFailure.alreadyFinished {
            return pages.message(heading: "This sign-in was already completed", message: "Go back to the app.", status: .badRequest)
        } catch LoginSteps.FinishFailure.wrongUser {
            return redirectError(session, OAuthError(.loginRequired, "the user who signed in is not the one id_token_hint names"))
        }
        let started = try await sessions.start(LoginSteps.authentication(user: user, twoFactor: twoFactor, at: provider.now(), sessionID: sid))
        var response = Response(status: .seeOther, headers: [.location: finished.location])
        response.setCookie(started.1)
        // The cookie holds one token; only this client's token is replaced or revoked here.
        let remembered = RememberTokens(provider: provider)
        let old = request.cookies[Self.rememberCookie]?.value
        let oldIsThisClients = try await old.asyncMap { try await remembered.user(for: $0, clientID: client.id) } != nil
        if let token = finished.rememberToken {
            if let old, oldIsThisClients { try await remembered.revoke(old) }
            response.setCookie(sessions.cookie(Self.rememberCookie, value: token, maxAge: Int(provider.configuration.rememberTokenLifetime)))
        } else if !rememberMe, let old, oldIsThisClients {
            try await remembered.revoke(old)
            response.setCookie(sessions.cookie(Self.rememberCookie, value: "", maxAge: 0))
        }
        return response
    }

    private func redirectError(_ session: LoginSessionRecord, _ error: OAuthError) -> Response {
        Response(
            status: .seeOther,
            headers: [.location: AuthorizationResponse.errorURL(error, redirectURI: session.request.redirectURI, state: session.request.state, issuer: provider.issuer)])
    }

    private func form(_ session: LoginSessionRecord, handle: String, clientName: String, username: String?, rememberMe: Bool, error: String?, status: HTTPResponse.Status) -> Response {
        var values = ["clientName": clientName, "authorization": handle, "csrfToken": session.csrfToken ?? ""]
        values["username"] = username
        values["error"] = error
        values["rememberMe"] = rememberMe ? "yes" : nil
        let targets = PageRenderer.formTarget(for: session.request.redirectURI).map { [$0] } ?? []
        return pages.render("login", title: "Sign in", values: values, status: status, formTargets: targets)
    }

    private func smsForm(_ session: LoginSessionRecord, handle: String, error: String?, status: HTTPResponse.Status) -> Response {
        var values = [
            "authorization": handle, "csrfToken": session.csrfToken ?? "", "digits": String(provider.configuration.sms.digits),
            "phoneHint": OneTimeCodes.hint(session.sms?.phoneNumber ?? ""),
        ]
        values["error"] = error
        let targets = PageRenderer.formTarget(for: session.request.redirectURI).map { [$0] } ?? []
        return pages.render("sms", title: "Enter the code", values: values, status: status, formTargets: targets)
    }
}
