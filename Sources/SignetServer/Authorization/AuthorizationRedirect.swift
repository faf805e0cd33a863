// The last answer of an authorization request: a redirect, or a page with a link back to the app.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// Sends the browser back to the client with a code or an error (RFC 6749 §4.1.2).
///
/// For `redirect_uri_https_type=app_claimed_https` (Singpass) the redirect URI is a claimed
/// https link, which the phone opens in the app only when the user taps it; an HTTP redirect
/// would load it in the browser. Such requests get a page whose "Return to <app>" link is the
/// redirect, with no script (the pages' CSP allows none).
struct AuthorizationRedirect: Sendable {
    let pages: PageRenderer

    func response(to location: String, for request: ValidatedAuthorizationRequest, clientName: String, status: HTTPResponse.Status = .found)
        -> Response
    {
        guard request.returnByLink == true else { return Response(status: status, headers: [.location: location]) }
        let isError = URLComponents(string: location)?.queryItems?.contains { $0.name == OAuthParameter.error } ?? false
        var values = ["clientName": clientName, "location": location]
        values[isError ? "failed" : "signedIn"] = "yes"
        return pages.render("return", title: "Return to \(clientName)", values: values)
    }
}
