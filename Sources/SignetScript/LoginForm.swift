// The hosted login page, filled in by a program as a person with a browser would.
import Foundation
import SignetCore

/// Reads the hidden fields of the login form.
public enum LoginForm {
    /// `authorization` and `csrf_token` from the page, or `nil` when the page has no login form.
    public static func fields(in html: String) -> (authorization: String, csrfToken: String)? {
        guard let authorization = hiddenValue("authorization", in: html), let csrf = hiddenValue("csrf_token", in: html) else { return nil }
        return (authorization, csrf)
    }

    /// The value of the hidden input `name` in `html`, or `nil` when there is none.
    public static func hiddenValue(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: #"name="\#(name)" value=""#) else { return nil }
        let rest = html[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}

extension LoginForm {
    /// Opens an authorization URL, signs in on the hosted page when one is shown (the form posts
    /// to `login` beside the authorization endpoint), and returns the `Location` of the redirect
    /// to the client (with `code`, or with `error`). Used by tests, the demo and the benchmark.
    public static func redirect(for url: URL, browser: ScriptedBrowser = ScriptedBrowser(), username: String, password: String) async throws -> URL {
        var response = try await browser.get(url.absoluteString)
        if response.status == 200, let fields = fields(in: response.body), var login = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            login.path = String(login.path.dropLast("authorize".count)) + "login"
            login.query = nil
            response = try await browser.post(
                login.string ?? "",
                form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", username), ("password", password)])
        }
        guard [302, 303].contains(response.status), let location = response.header("Location"), let redirect = URL(string: location) else {
            throw SignetError(.malformedMessage, "the provider did not redirect: \(response.status) \(response.body.prefix(300))")
        }
        return redirect
    }
}
