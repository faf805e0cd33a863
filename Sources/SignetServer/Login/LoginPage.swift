// The hosted login page: GET shows it (from /authorize), POST /login checks the password.
import Foundation
import Hummingbird
import SignetCore

/// The username-and-password page and its form handler.
struct LoginPage: Sendable {
    let provider: Provider
    let pages: PageRenderer
    let sessions: BrowserSessions

    var throttle: LoginThrottle {
        LoginThrottle(store: provider.store, policy: provider.configuration.throttle, clock: provider.clock)
    }

    /// Stores the request as pending, binds it to this browser, and shows the form.
    func start(_ authorization: ValidatedAuthorizationRequest, client: ClientRecord, request: Request) async throws -> Response {
        let binding = sessions.browserBinding(request)
        let pending = PendingAuthorizationRecord(
            id: provider.random.token(), request: authorization, browserBindingHash: SecretDigest.hex(binding.value),
            csrfToken: provider.random.token(), expiresAt: provider.now().addingTimeInterval(provider.configuration.loginPageLifetime))
        try await provider.store.insertPendingAuthorization(pending)
        var response = form(pending, clientName: client.name, username: authorization.loginHint, error: nil, status: .ok)
        if let cookie = binding.cookie { response.setCookie(cookie) }
        return response
    }

    /// Handles the submitted form.
    func submit(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let parameters: FormParameters
        do {
            parameters = try await RequestParameters.form(request, maxBodySize: provider.configuration.maxBodySize)
        } catch let error as OAuthHTTPError {
            return pages.message(heading: "The sign-in form could not be read", message: error.error.errorDescription ?? "", status: error.status)
        }
        guard parameters.duplicatedNames.isEmpty else {
            return pages.message(heading: "The sign-in form could not be read", message: "A field was sent twice.", status: .badRequest)
        }
        guard let id = parameters["authorization"], id.utf8.count <= 64,
            let pending = try await provider.store.pendingAuthorization(id: id), pending.expiresAt > provider.now()
        else {
            return pages.message(
                heading: "This sign-in has expired", message: "Go back to the app and start signing in again.", status: .badRequest)
        }
        // CSRF: the form's token must match, and the form must come back to the browser it was shown in.
        let browser = request.cookies[BrowserSessions.browserCookie]?.value ?? ""
        guard let csrf = parameters["csrf_token"], ConstantTime.equals(csrf, pending.csrfToken),
            ConstantTime.equals(SecretDigest.hex(browser), pending.browserBindingHash)
        else {
            return pages.message(
                heading: "The sign-in form was rejected",
                message: "The form was not sent from the sign-in page in this browser. Go back to the app and start again.",
                status: .forbidden)
        }
        guard let client = try await provider.store.client(id: pending.request.clientID) else {
            return pages.message(heading: "This sign-in has expired", message: "The app is no longer registered.", status: .badRequest)
        }
        let username = (parameters["username"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let password = parameters["password"] ?? ""
        guard !username.isEmpty, !password.isEmpty, username.utf8.count <= 128, password.utf8.count <= 1024 else {
            return form(pending, clientName: client.name, username: String(username.prefix(128)), error: "Enter your username and password.", status: .badRequest)
        }

        let address = context.sourceAddress
        let wait = try await throttle.wait(username: username, address: address)
        if wait > 0 {
            return form(pending, clientName: client.name, username: username, error: LoginThrottle.pauseMessage(seconds: wait), status: .tooManyRequests)
        }
        let user = try await provider.store.user(username: username)
        guard await provider.passwords.verify(password, hash: user?.passwordHash), let user else {
            try await throttle.recordFailure(username: username, address: address)
            provider.logger.info("login failed", metadata: ["event": "login.failed", "client_id": .string(client.id)])
            return form(pending, clientName: client.name, username: username, error: "The username or password is incorrect.", status: .unauthorized)
        }
        try await throttle.recordSuccess(username: username)

        // Single use: only one submission of this form completes it.
        guard let authorization = try await provider.store.consumePendingAuthorization(id: pending.id) else {
            return pages.message(heading: "This sign-in was already completed", message: "Go back to the app.", status: .badRequest)
        }
        let now = provider.now()
        var authentication = Authentication(
            userID: user.id, time: now, acr: AuthorizationRequestValidator.acrOneFactor, amr: ["pwd"], sessionID: nil)
        let (session, cookie) = try await sessions.start(authentication)
        authentication.sessionID = session.sid
        let location = try await provider.issueCode(for: authorization.request, authentication: authentication)
        provider.logger.info("login succeeded", metadata: ["event": "login.succeeded", "client_id": .string(client.id), "sub": .string(user.id)])
        var response = Response(status: .seeOther, headers: [.location: location])
        response.setCookie(cookie)
        return response
    }

    private func form(_ pending: PendingAuthorizationRecord, clientName: String, username: String?, error: String?, status: HTTPResponse.Status) -> Response {
        var values = ["clientName": clientName, "authorization": pending.id, "csrfToken": pending.csrfToken]
        values["username"] = username
        values["error"] = error
        let targets = PageRenderer.formTarget(for: pending.request.redirectURI).map { [$0] } ?? []
        return pages.render("login", title: "Sign in", values: values, status: status, formTargets: targets)
    }
}
