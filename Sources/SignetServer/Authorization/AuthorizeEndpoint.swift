// GET and POST /authorize — OIDC Core §3.1.2, RFC 6749 §4.1.1.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// The authorization endpoint: checks the request, reuses a live browser session
/// when it may, and otherwise shows the hosted login page.
struct AuthorizeEndpoint: Sendable {
    let server: ServerContext
    let codeIssuer: AuthorizationCodeIssuer
    let loginPage: LoginPage
    let pages: PageRenderer
    let requests: AuthorizationRequestReader
    let sessions: BrowserSessions
    let maxBodySize: Int

    func handle(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let parameters: FormParameters
        do {
            parameters = try await RequestParameters.read(request, maxBodySize: maxBodySize)
        } catch let error as OAuthHTTPError {
            return invalidRequestPage(error.error, status: error.status)
        }
        switch try await requests.read(parameters, from: .frontChannel).decision {
        case .showError(let error):
            return invalidRequestPage(error, status: .badRequest)
        case .redirectError(let error, let redirectURI, let state):
            return redirect(AuthorizationResponse.errorURL(error, redirectURI: redirectURI, state: state, issuer: server.issuer))
        case .valid(let authorization, let client):
            return try await decide(authorization, client: client, request: request)
        }
    }

    /// Whether the browser's session can answer this request, or the user must sign in.
    private func decide(_ authorization: ValidatedAuthorizationRequest, client: ClientRecord, request: Request) async throws -> Response {
        let session = try await sessions.current(request)
        let now = server.now()
        var sessionUsable = session != nil
        if let session {
            if !authorization.prompt.filter({ $0 != "none" }).isEmpty { sessionUsable = false }
            if let maxAge = authorization.maxAge, now.timeIntervalSince(session.authTime) > Double(maxAge) { sessionUsable = false }
            if let subject = authorization.idTokenHintSubject, subject != session.userID { sessionUsable = false }
            // A one-factor session cannot answer a request for two factors: step up.
            if authorization.requiresTwoFactors, session.acr != AuthorizationRequestValidator.acrTwoFactors {
                sessionUsable = false
            }
        }
        if let session, sessionUsable, Self.mustConfirmSession(client: client, redirectURI: authorization.redirectURI) {
            // RFC 8252 §8.6: any app can claim a private-use scheme or listen on loopback, so the
            // user confirms before a public client's code is issued from an existing session.
            if authorization.prompt.contains("none") {
                let error = OAuthError(.interactionRequired, "the user must confirm before this app is signed in")
                return back(
                    AuthorizationResponse.errorURL(error, redirectURI: authorization.redirectURI, state: authorization.state, issuer: server.issuer),
                    authorization, client)
            }
            return
                try await loginPage
                .offerContinue(authorization, client: client, browserSession: session, request: request)
        }
        if let session, sessionUsable {
            let authentication = Authentication(
                userID: session.userID, time: session.authTime, acr: session.acr, amr: session.amr, sessionID: session.sid,
                userStamp: session.userStamp)
            return back(try await codeIssuer.issue(for: authorization, authentication: authentication).location, authorization, client)
        }
        if authorization.prompt.contains("none") {
            let error = OAuthError(.loginRequired, "the user must sign in")
            return back(
                AuthorizationResponse.errorURL(error, redirectURI: authorization.redirectURI, state: authorization.state, issuer: server.issuer),
                authorization, client)
        }
        return
            try await loginPage
            .start(authorization, client: client, request: request)
    }

    /// Whether single sign-on needs the user's confirmation: a public client whose redirect URI
    /// does not prove its identity (a private-use scheme or a loopback address, RFC 8252 §8.6).
    /// Claimed https redirects and confidential clients keep silent single sign-on.
    static func mustConfirmSession(client: ClientRecord, redirectURI: String) -> Bool {
        guard client.authMethod == .none else { return false }
        switch RedirectURI.classify(redirectURI) {
        case .success(.privateUseScheme), .success(.loopback): return true
        default: return false
        }
    }

    /// The answer that returns a validated request to its client (a page with a link for app_claimed_https).
    private func back(_ location: String, _ authorization: ValidatedAuthorizationRequest, _ client: ClientRecord) -> Response {
        AuthorizationRedirect(pages: pages).response(to: location, for: authorization, clientName: client.name)
    }

    private func redirect(_ location: String) -> Response {
        Response(status: .found, headers: [.location: location])
    }

    private func invalidRequestPage(_ error: OAuthError, status: HTTPResponse.Status) -> Response {
        pages.message(
            heading: "This sign-in request cannot be completed",
            message: "The app that sent you here made a request Signet cannot accept. Go back to the app and try again.",
            detail: "\(error.error.rawValue): \(error.errorDescription ?? "")", status: status)
    }
}
