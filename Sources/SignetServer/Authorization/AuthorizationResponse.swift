// The redirect that answers an authorization request, with a code or an error.
import SignetCore

/// Builds authorization responses (RFC 6749 §4.1.2, RFC 9207 §2).
public enum AuthorizationResponse {
    /// `redirectURI` with `parameters` added to its query.
    public static func url(_ redirectURI: String, parameters: FormParameters) -> String {
        parameters.appended(to: redirectURI)
    }

    /// The error redirect of RFC 6749 §4.1.2.1 with `iss` (RFC 9207).
    public static func errorURL(_ error: OAuthError, redirectURI: String, state: String?, issuer: String) -> String {
        var parameters = FormParameters()
        parameters.append(OAuthParameter.error, error.error.rawValue)
        parameters.append(OAuthParameter.errorDescription, error.errorDescription)
        parameters.append(OAuthParameter.state, state)
        parameters.append(OAuthParameter.issuer, issuer)
        return url(redirectURI, parameters: parameters)
    }
}
