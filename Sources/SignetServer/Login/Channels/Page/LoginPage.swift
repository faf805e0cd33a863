// The hosted login page: GET shows it (from /authorize); POST /login checks the password;
// POST /login/sms and /login/sms/resend handle the SMS one-time code. The rules are
// LoginFlow's; this file reads forms, LoginPageView renders the outcomes.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// The hosted page: parses its forms and hands them to ``LoginRunner``.
struct LoginPage: Sendable {
    let server: ServerContext
    let clients: any ClientStore
    let users: any UserStore
    /// Logins in progress.
    let logins: any GrantStore
    let codeIssuer: AuthorizationCodeIssuer
    let rememberTokens: RememberTokens
    let runner: LoginRunner
    let loginSessions: LoginSessions
    let pages: PageRenderer
    let sessions: BrowserSessions
    let smsPolicy: SMSPolicy
    let loginPageLifetime: TimeInterval
    let rememberTokenLifetime: TimeInterval
    let maxBodySize: Int

    /// Stores the login, binds it to this browser, and shows the form (pre-filled for a remembered user).
    func start(_ authorization: ValidatedAuthorizationRequest, client: ClientRecord, request: Request) async throws -> Response {
        let (session, handle, cookie) = try await storeLogin(authorization, request: request)
        var username = authorization.loginHint
        var remembered = false
        if username == nil, let token = request.cookies[sessions.name(.remember)]?.value,
            let user = try await rememberTokens.user(for: token, clientID: client.id)
        {
            username = user.username
            remembered = true
        }
        var response = LoginPageView(page: self, handle: handle, client: client, username: username, rememberMe: remembered).form(
            session, error: nil, status: .ok)
        if let cookie { response.setCookie(cookie) }
        return response
    }

    /// Asks a signed-in user to confirm before a code goes to a client whose identity is not
    /// assured (RFC 8252 §8.6): the login is stored as usual, and the page offers to continue
    /// with the browser session or to sign in as someone else.
    func offerContinue(_ authorization: ValidatedAuthorizationRequest, client: ClientRecord, browserSession: BrowserSessionRecord, request: Request)
        async throws -> Response
    {
        let (session, handle, cookie) = try await storeLogin(authorization, request: request, offering: browserSession.sid)
        let username = try await users.user(id: browserSession.userID)?.username ?? ""
        let values = ["clientName": client.name, "authorization": handle, "csrfToken": session.csrfToken ?? "", "username": username]
        var response = pages.render(
            "continue", title: "Continue", values: values, formTargets: PageRenderer.formTarget(for: authorization.redirectURI).map { [$0] } ?? [])
        if let cookie { response.setCookie(cookie) }
        return response
    }

    /// Stores a page login bound to this browser (with a fresh CSRF token); returns it, its
    /// handle, and the browser-binding cookie to set when the browser had none.
    private func storeLogin(_ authorization: ValidatedAuthorizationRequest, request: Request, offering sid: String? = nil) async throws -> (
        LoginSessionRecord, String, Cookie?
    ) {
        let binding = sessions.browserBinding(request)
        let start = LoginStart.page(browserBindingHash: SecretDigest.hex(binding.value), csrfToken: server.random.token(), offeredSessionSID: sid)
        let (session, handle) = try await loginSessions.start(start, request: authorization, lifetime: loginPageLifetime)
        return (session, handle, binding.cookie)
    }

    /// POST /login/continue: the user confirmed (or declined) the browser session offered.
    func continueAs(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let loaded = try await load(request)
        guard case .loaded(let session, let handle, let parameters, let client) = loaded else { return loaded.response! }
        let view = LoginPageView(page: self, handle: handle, client: client)
        guard let offered = session.offeredSessionSID, session.step == .usernamePassword else {
            return view.render(.refused(.wrongStep(expected: session.step), session))
        }
        guard parameters["choice"] == "continue" else { return view.form(session, error: nil, status: .ok) }
        // The browser must still hold the very session it was shown.
        guard let browserSession = try await sessions.current(request), browserSession.sid == offered,
            session.request.maxAge.map({ server.now().timeIntervalSince(browserSession.authTime) <= Double($0) }) ?? true,
            !session.request.requiresTwoFactors || browserSession.acr == AuthorizationRequestValidator.acrTwoFactors
        else {
            return view.form(session, error: "Your session has ended. Sign in to continue.", status: .ok)
        }
        guard try await logins.consumeLoginSession(id: session.id) != nil else { return view.render(.conflict) }
        let authentication = Authentication(
            userID: browserSession.userID, time: browserSession.authTime, acr: browserSession.acr, amr: browserSession.amr,
            sessionID: browserSession.sid,
            userStamp: browserSession.userStamp)
        let code = try await codeIssuer.issue(for: session.request, authentication: authentication)
        return AuthorizationRedirect(pages: pages).response(to: code.location, for: session.request, clientName: client.name, status: .seeOther)
    }

    /// POST /login: the username and password (or the password of a remembered user).
    func submit(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let loaded = try await load(request)
        guard case .loaded(let session, let handle, let parameters, let client) = loaded else { return loaded.response! }
        let username = (parameters["username"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let password = parameters["password"] ?? ""
        let rememberMe = parameters["remember_me"] == "on"
        let view = LoginPageView(page: self, handle: handle, client: client, username: String(username.prefix(128)), rememberMe: rememberMe)
        guard !username.isEmpty, !password.isEmpty, username.utf8.count <= 128, password.utf8.count <= 1024 else {
            return view.render(.refused(.missingCredentials, session))
        }
        let outcome = try await runner.submitPassword(
            username: username, password: password, rememberMe: rememberMe, on: session, context: loginContext(context, client: client))
        return try await view.finishOrRender(outcome, request: request)
    }

    /// POST /login/sms: the one-time code.
    func submitCode(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let loaded = try await load(request)
        guard case .loaded(let session, let handle, let parameters, let client) = loaded else { return loaded.response! }
        let code = (parameters["code"] ?? "").trimmingCharacters(in: .whitespaces)
        let outcome = try await runner.submitCode(code, on: session, context: loginContext(context, client: client))
        return try await LoginPageView(page: self, handle: handle, client: client).finishOrRender(outcome, request: request)
    }

    /// POST /login/sms/resend: a new code, within the resend rules.
    func resend(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let loaded = try await load(request)
        guard case .loaded(let session, let handle, _, let client) = loaded else { return loaded.response! }
        let outcome = try await runner.resend(on: session, context: loginContext(context, client: client))
        return try await LoginPageView(page: self, handle: handle, client: client).finishOrRender(outcome, request: request)
    }

    private func loginContext(_ context: SignetRequestContext, client: ClientRecord) -> LoginContext {
        LoginContext(address: context.sourceAddress, clientName: client.name, browserSessionID: server.random.token(byteCount: 16))
    }

    // MARK: Shared

    /// A form post read and checked: the session exists, is live, and came from this browser with the CSRF token.
    enum Loaded {
        case loaded(LoginSessionRecord, handle: String, FormParameters, ClientRecord)
        case refused(Response)
        var response: Response? {
            if case .refused(let response) = self { return response }
            return nil
        }
    }

    func load(_ request: Request) async throws -> Loaded {
        let parameters: FormParameters
        do {
            parameters = try await RequestParameters.form(request, maxBodySize: maxBodySize)
        } catch let error as OAuthHTTPError {
            return .refused(
                pages.message(heading: "The sign-in form could not be read", message: error.error.errorDescription ?? "", status: error.status))
        }
        guard parameters.duplicatedNames.isEmpty else {
            return .refused(pages.message(heading: "The sign-in form could not be read", message: "A field was sent twice.", status: .badRequest))
        }
        let handle = parameters["authorization"] ?? ""
        let found: LoginSessions.Found = handle.isEmpty ? .none : try await loginSessions.load(handle: handle, channel: .page)
        let session: LoginSessionRecord
        let client: ClientRecord?
        switch found {
        case .none:
            return .refused(
                pages.message(heading: "This sign-in has expired", message: "Go back to the app and start signing in again.", status: .badRequest))
        case .clientGone(let stored): (session, client) = (stored, nil)
        case .live(let live, let registered): (session, client) = (live, registered)
        }
        // CSRF: the form's token must match, and the form must come back to the browser it was shown in.
        let browser = request.cookies[sessions.name(.browser)]?.value ?? ""
        guard let csrf = parameters["csrf_token"], let expected = session.csrfToken, ConstantTime.equals(csrf, expected),
            let binding = session.browserBindingHash, ConstantTime.equals(SecretDigest.hex(browser), binding)
        else {
            return .refused(
                pages.message(
                    heading: "The sign-in form was rejected",
                    message: "The form was not sent from the sign-in page in this browser. Go back to the app and start again.", status: .forbidden))
        }
        guard let client else {
            return .refused(pages.message(heading: "This sign-in has expired", message: "The app is no longer registered.", status: .badRequest))
        }
        return .loaded(session, handle: handle, parameters, client)
    }
}
