// Driving the hosted login page from tests, as a person with a browser would.
import Foundation
import SignetCore
import SignetScript

/// The values a client keeps between sending the user to `/authorize` and redeeming the code.
public struct TestAuthorization: Sendable {
    public var clientID: String
    public var redirectURI: String
    public var scope: String
    public var state: String
    public var nonce: String
    public var verifier: String
    public var challenge: String { PKCE.challenge(for: verifier) }

    public init(clientID: String, redirectURI: String, scope: String = "openid profile email") {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = SecureRandom().token(byteCount: 12)
        self.nonce = SecureRandom().token(byteCount: 12)
        self.verifier = PKCE.makeVerifier()
    }

    /// The parameters of the authorization request; `extra` are appended, `omit` removed.
    public func parameters(extra: [(String, String)] = [], omit: Set<String> = []) -> [(String, String)] {
        let base: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", scope), ("state", state),
            ("nonce", nonce), ("code_challenge", challenge), ("code_challenge_method", "S256"),
        ]
        return base.filter { !omit.contains($0.0) } + extra
    }

    /// The `/authorize` URL at `issuer`.
    public func url(issuer: String, extra: [(String, String)] = [], omit: Set<String> = []) -> String {
        issuer + "/authorize?" + FormParameters(parameters(extra: extra, omit: omit).map { (name: $0.0, value: $0.1) }).encoded
    }
}

extension TestProvider {
    /// Opens `/authorize` and submits the login form; returns the final response (a 303 on success).
    public func submitLogin(
        _ authorization: TestAuthorization, browser: ScriptedBrowser, username: String, password: String, extra: [(String, String)] = []
    ) async throws -> ScriptedResponse {
        try await submitLogin(at: authorization.url(issuer: issuer, extra: extra), browser: browser, username: username, password: password)
    }

    /// Opens the authorization request at `requestURL` (as a relying party made it) and submits
    /// the login form; returns the final response (a 303 on success), or the page when it has no form.
    public func submitLogin(at requestURL: String, browser: ScriptedBrowser, username: String, password: String) async throws -> ScriptedResponse {
        let page = try await browser.get(requestURL)
        guard page.status == 200, let fields = LoginForm.fields(in: page.body) else { return page }
        return try await browser.post(
            url("/login"),
            form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", username), ("password", password)])
    }

    /// Signs in through the hosted page and returns the authorization code.
    /// Signs in with two factors (`acr_values` `urn:signet:loa:2`): the password, then the SMS
    /// code read from the test outbox; returns the authorization code.
    public func signInTwoFactor(_ authorization: TestAuthorization, browser: ScriptedBrowser = ScriptedBrowser(), username: String, password: String)
        async throws -> String
    {
        let page = try await submitLogin(
            authorization, browser: browser, username: username, password: password, extra: [("acr_values", "urn:signet:loa:2")])
        guard page.status == 200, let fields = LoginForm.fields(in: page.body),
            let text = await outbox.messages.last(where: { $0.purpose == "login_otp" })?.body, let sms = text.split(separator: "#").last
        else { throw SignetError(.malformedMessage, "no SMS step: \(page.status) \(page.header("Location") ?? "") \(page.body.prefix(300))") }
        let response = try await browser.post(
            url("/login/sms"), form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("code", String(sms))])
        guard response.status == 303, let code = response.locationParameters?["code"] else {
            throw SignetError(.malformedMessage, "the SMS step did not redirect with a code: \(response.status) \(response.body.prefix(300))")
        }
        return code
    }

    public func signIn(
        _ authorization: TestAuthorization, browser: ScriptedBrowser = ScriptedBrowser(), username: String, password: String,
        extra: [(String, String)] = []
    ) async throws -> String {
        let response = try await submitLogin(authorization, browser: browser, username: username, password: password, extra: extra)
        guard response.status == 303, let parameters = response.locationParameters, let code = parameters["code"] else {
            throw SignetError(.malformedMessage, "login did not redirect with a code: \(response.status) \(response.body.prefix(300))")
        }
        return code
    }

    /// Redeems a code at the token endpoint with the given client authentication parameters
    /// (by `browser`: e.g. a device's, which presents its client certificate).
    public func redeem(
        _ code: String, _ authorization: TestAuthorization, clientAuth: [(String, String)], headers: [(String, String)] = [],
        browser: ScriptedBrowser = ScriptedBrowser()
    ) async throws -> ScriptedResponse {
        try await browser.post(
            url("/token"),
            form: [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", authorization.redirectURI),
                ("code_verifier", authorization.verifier),
            ]
                + clientAuth, headers: headers)
    }
}

extension TestProvider {
    /// Follows an authorization URL as a person with a browser would and returns where the
    /// provider finally redirects (see ``LoginForm/redirect(for:browser:username:password:)``).
    ///
    /// For SDK tests: a scripted user agent hands this redirect back to the app.
    public func browserRedirect(for url: URL, browser: ScriptedBrowser = ScriptedBrowser(), username: String, password: String) async throws -> URL {
        try await LoginForm.redirect(for: url, browser: browser, username: username, password: password)
    }
}
