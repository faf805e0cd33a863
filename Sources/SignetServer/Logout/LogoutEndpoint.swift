// GET and POST /logout — OpenID Connect RP-Initiated Logout 1.0.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// Ends the browser session at a relying party's request, then returns to a registered URI.
///
/// With a valid `id_token_hint` for the signed-in user the session ends at once; otherwise
/// the user confirms on a page whose form carries an anti-CSRF token bound to the browser.
struct LogoutEndpoint: Sendable {
    let clients: any ClientStore
    let users: any UserStore
    let ownTokens: OwnTokenVerifier
    let rememberTokens: RememberTokens
    let audit: AuditTrail
    /// Makes the confirmation form's anti-CSRF token.
    let keys: ServerKeys
    let pages: PageRenderer
    let sessions: BrowserSessions
    let maxBodySize: Int

    func handle(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let parameters: FormParameters
        do {
            parameters = try await RequestParameters.read(request, maxBodySize: maxBodySize)
        } catch let error as OAuthHTTPError {
            return errorPage(error.error.errorDescription ?? "", status: error.status)
        }
        guard parameters.duplicatedNames.isEmpty else { return errorPage("A parameter was sent twice.", status: .badRequest) }

        var hintClaims: IDTokenClaims?
        if let hint = parameters[OAuthParameter.idTokenHint] {
            // Expired hints are fine (the RP logs out after the token's life); the signature and issuer must hold.
            guard let claims = await ownTokens.idTokenHint(hint) else {
                return errorPage("id_token_hint is not an ID token issued here.", status: .badRequest)
            }
            hintClaims = claims
        }
        let clientID = parameters[OAuthParameter.clientID] ?? hintClaims?.aud.first
        if let claimed = parameters[OAuthParameter.clientID], let hintClaims, !hintClaims.aud.contains(claimed) {
            return errorPage("client_id does not match id_token_hint.", status: .badRequest)
        }
        var returnTo: String?
        if let uri = parameters[OAuthParameter.postLogoutRedirectURI] {
            guard let clientID, let client = try await clients.client(id: clientID),
                RedirectURI.matches(uri, registered: client.postLogoutRedirectURIs)
            else { return errorPage("post_logout_redirect_uri is not registered for this client.", status: .badRequest) }
            var query = FormParameters()
            query.append(OAuthParameter.state, parameters[OAuthParameter.state])
            returnTo = query.pairs.isEmpty ? uri : AuthorizationResponse.url(uri, parameters: query)
        }

        let session = try await sessions.current(request)
        let binding = sessions.browserBinding(request)
        let csrf = keys.csrfToken("logout", binding: binding.value)
        let confirmed: Bool
        if request.method == .post, let token = parameters["csrf_token"] {
            guard ConstantTime.equals(token, csrf), binding.cookie == nil else {
                return errorPage("The sign-out form was not sent from this browser.", status: .forbidden)
            }
            confirmed = true
        } else if request.method == .post {
            // An RP's cross-site POST (RP-Initiated Logout §2) carries no SameSite=Lax cookie, so the
            // session is invisible here: always ask, on a same-origin page that sees the cookies.
            confirmed = false
        } else {
            // forget_user revokes a token even without a session, so it always needs the confirmation form.
            let forgetting = parameters["forget_user"] == "true"
            confirmed = !forgetting && (session == nil || (hintClaims != nil && hintClaims?.sub == session?.userID))
        }

        if !confirmed {
            let user = try await session.asyncMap { try await users.user(id: $0.userID) } ?? nil
            var values = ["csrfToken": csrf]
            values["username"] = user?.username
            values["postLogoutRedirectURI"] = parameters[OAuthParameter.postLogoutRedirectURI]
            values["clientID"] = clientID
            values["state"] = parameters[OAuthParameter.state]
            values["forgetUser"] = parameters["forget_user"] == "true" ? "true" : nil
            let targets = returnTo.flatMap(PageRenderer.formTarget(for:)).map { [$0] } ?? []
            var response = pages.render("logout", title: "Sign out", values: values, formTargets: targets)
            if let cookie = binding.cookie { response.setCookie(cookie) }
            return response
        }

        let cleared = try await sessions.end(request)
        // forget_user=true also revokes this browser's Remember-User-ID token.
        let forget = parameters["forget_user"] == "true"
        if forget, let token = request.cookies[sessions.name(.remember)]?.value { try await rememberTokens.revoke(token) }
        if let session {
            // The client is named in the trail only when it is a registered one (the parameter is the asker's).
            let registered = try await clientID.asyncMap { try await clients.client(id: $0) } ?? nil
            try await audit.record("logout", userID: session.userID, clientID: registered?.id, actor: .user)
        }
        var response: Response
        if let returnTo {
            response = Response(status: request.method == .post ? .seeOther : .found, headers: [.location: returnTo])
        } else {
            response = pages.message(heading: "You are signed out", message: "You can close this window.", status: .ok)
        }
        response.setCookie(cleared)
        if forget { response.setCookie(sessions.cookie(.remember, value: "", maxAge: 0)) }
        return response
    }

    fileprivate func errorPage(_ detail: String, status: HTTPResponse.Status) -> Response {
        pages.message(
            heading: "Sign-out request not valid", message: "The app sent a sign-out request Signet cannot accept.", detail: detail, status: status)
    }
}
