// What the hosted login page shows for each outcome of the login flow.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// Renders ``LoginOutcome``s as pages and redirects; finishing starts the browser session.
struct LoginPageView: Sendable {
    let page: LoginPage
    /// The form's hidden login handle.
    let handle: String
    let client: ClientRecord
    /// What to pre-fill in the username form.
    var username: String? = nil
    var rememberMe: Bool = false

    var server: ServerContext { page.server }
    var smsPolicy: SMSPolicy { page.smsPolicy }
    var rememberTokenLifetime: TimeInterval { page.rememberTokenLifetime }
    var pages: PageRenderer { page.pages }
    var sessions: BrowserSessions { page.sessions }

    func finishOrRender(_ outcome: LoginOutcome, request: Request) async throws -> Response {
        guard case .finished(let finished) = outcome else { return render(outcome) }
        return try await finish(finished, request: request)
    }

    func render(_ outcome: LoginOutcome) -> Response {
        switch outcome {
        case .show(let session):
            let failed = session.sms?.deliveryFailed == true
            return step(session, error: failed ? Self.deliveryFailed : nil, status: failed ? .serviceUnavailable : .ok)
        case .refused(let reason, let session):
            return refused(reason, session)
        case .abandoned(.noSecondFactor, let session):
            return redirectError(session, OAuthError(.accessDenied, "two factors are required and this user has no phone number"))
        case .abandoned(.wrongUser, let session):
            return redirectError(session, OAuthError(.loginRequired, "the user who signed in is not the one id_token_hint names"))
        case .abandoned:
            return pages.message(heading: "This sign-in has expired", message: "Go back to the app and start signing in again.", status: .badRequest)
        case .conflict:
            return pages.message(heading: "This sign-in changed in another window", message: "Go back to the app and start again.", status: .conflict)
        case .finished:
            return pages.message(heading: "This sign-in was already completed", message: "Go back to the app.", status: .badRequest)
        }
    }

    static let deliveryFailed = "We could not send the code. Use “Send a new code” to try again."

    private func refused(_ reason: LoginRefusal, _ session: LoginSessionRecord) -> Response {
        switch reason {
        case .wrongStep:
            return pages.message(heading: "This step is already done", message: "Go back to the app and start signing in again.", status: .conflict)
        case .stepInProgress:
            return render(.conflict)
        case .scenarioNotAllowed, .rememberedUserChanged, .noSecondFactor, .wrongUser:
            return pages.message(heading: "This sign-in cannot go on", message: "Go back to the app and start signing in again.", status: .badRequest)
        case .missingCredentials: return step(session, error: "Enter your username and password.", status: .badRequest)
        case .invalidCredentials: return step(session, error: "The username or password is incorrect.", status: .unauthorized)
        case .accountLocked: return step(session, error: "This account is locked. Contact support to unlock it.", status: .forbidden)
        case .accountChanged, .loginAttemptsExhausted:
            return pages.message(heading: "This sign-in cannot go on", message: "Go back to the app and start signing in again.", status: .forbidden)
        case .paused(let seconds): return step(session, error: LoginThrottle.pauseMessage(seconds: seconds), status: .tooManyRequests)
        case .codeNotSent: return step(session, error: Self.deliveryFailed, status: .conflict)
        case .malformedCode(let digits): return step(session, error: "Enter the \(digits)-digit code.", status: .badRequest)
        case .wrongCode(let left):
            return step(session, error: "The code is not right. \(left) \(left == 1 ? "try" : "tries") left.", status: .unauthorized)
        case .codeAttemptsExhausted(let canResend):
            let error =
                canResend ? "Too many wrong codes. Send a new code to try again." : "Too many wrong codes. Go back to the app and start again."
            return step(session, error: error, status: .forbidden)
        case .codeExpired: return step(session, error: "The code has expired. Send a new code.", status: .badRequest)
        case .resendTooEarly(let seconds):
            return step(session, error: "Wait \(Int(seconds.rounded(.up))) seconds before asking for a new code.", status: .tooManyRequests)
        case .resendLimitReached:
            return step(session, error: "No more codes can be sent. Go back to the app and start again.", status: .tooManyRequests)
        case .deliveryFailed: return step(session, error: Self.deliveryFailed, status: .serviceUnavailable)
        case .accountLimit(.wrongCodes, let retryAfter):
            return step(
                session, error: "Too many wrong codes for this account. Try again in \(Self.duration(retryAfter)) or contact support.",
                status: .tooManyRequests)
        case .accountLimit(.codeSends, let retryAfter):
            return step(
                session, error: "Too many codes were sent to this account. Try again in \(Self.duration(retryAfter)).", status: .tooManyRequests)
        }
    }

    /// "3 minutes", "2 hours": how long to wait, rounded up.
    static func duration(_ seconds: TimeInterval) -> String {
        let minutes = Int((seconds / 60).rounded(.up))
        if minutes < 2 { return "a minute" }
        if minutes < 120 { return "\(minutes) minutes" }
        return "\(Int((Double(minutes) / 60).rounded(.up))) hours"
    }

    /// The form of the login's current step.
    private func step(_ session: LoginSessionRecord, error: String?, status: HTTPResponse.Status) -> Response {
        session.step == .smsCode ? smsForm(session, error: error, status: status) : form(session, error: error, status: status)
    }

    func form(_ session: LoginSessionRecord, error: String?, status: HTTPResponse.Status) -> Response {
        var values = ["clientName": client.name, "authorization": handle, "csrfToken": session.csrfToken ?? ""]
        values["username"] = username
        values["error"] = error
        values["rememberMe"] = rememberMe ? "yes" : nil
        return pages.render("login", title: "Sign in", values: values, status: status, formTargets: formTargets(session))
    }

    private func smsForm(_ session: LoginSessionRecord, error: String?, status: HTTPResponse.Status) -> Response {
        var values = [
            "authorization": handle, "csrfToken": session.csrfToken ?? "", "digits": String(smsPolicy.digits),
            "phoneHint": OneTimeCodes.hint(session.sms?.phoneNumber ?? ""),
        ]
        values["error"] = error
        return pages.render("sms", title: "Enter the code", values: values, status: status, formTargets: formTargets(session))
    }

    private func formTargets(_ session: LoginSessionRecord) -> [String] {
        PageRenderer.formTarget(for: session.request.redirectURI).map { [$0] } ?? []
    }

    private func redirectError(_ session: LoginSessionRecord, _ error: OAuthError) -> Response {
        AuthorizationRedirect(pages: pages).response(
            to: AuthorizationResponse.errorURL(error, redirectURI: session.request.redirectURI, state: session.request.state, issuer: server.issuer),
            for: session.request, clientName: client.name, status: .seeOther)
    }

    /// Starts the browser session and redirects with the code; sets or clears the remember cookie.
    private func finish(_ finished: FinishedLogin, request: Request) async throws -> Response {
        let started = try await sessions.start(finished.authentication)
        var response = AuthorizationRedirect(pages: pages).response(
            to: finished.code.location, for: finished.session.request, clientName: client.name, status: .seeOther)
        response.setCookie(started.1)
        // The cookie holds one token; only this client's token is replaced or revoked here.
        let remembered = page.rememberTokens
        let old = request.cookies[sessions.name(.remember)]?.value
        let oldIsThisClients = try await old.asyncMap { try await remembered.user(for: $0, clientID: client.id) } != nil
        if let token = finished.rememberToken {
            if let old, oldIsThisClients { try await remembered.revoke(old) }
            response.setCookie(sessions.cookie(.remember, value: token, maxAge: Int(rememberTokenLifetime)))
        } else if !finished.session.rememberMe, let old, oldIsThisClients {
            try await remembered.revoke(old)
            response.setCookie(sessions.cookie(.remember, value: "", maxAge: 0))
        }
        return response
    }
}
