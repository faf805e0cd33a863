// The names of the OAuth and OpenID Connect parameters Signet reads and writes.

/// Wire parameter names, in one place so server, SDK and relying-party kit agree.
public enum OAuthParameter {
    public static let responseType = "response_type"  // RFC 6749 §3.1.1
    public static let clientID = "client_id"  // RFC 6749 §2.2
    public static let clientSecret = "client_secret"  // RFC 6749 §2.3.1
    public static let redirectURI = "redirect_uri"  // RFC 6749 §3.1.2
    public static let scope = "scope"  // RFC 6749 §3.3
    public static let state = "state"  // RFC 6749 §4.1.1
    public static let nonce = "nonce"  // OIDC Core §3.1.2.1
    public static let claims = "claims"  // OIDC Core §5.5
    public static let prompt = "prompt"  // OIDC Core §3.1.2.1
    public static let maxAge = "max_age"  // OIDC Core §3.1.2.1
    public static let loginHint = "login_hint"  // OIDC Core §3.1.2.1
    public static let acrValues = "acr_values"  // OIDC Core §3.1.2.1
    public static let uiLocales = "ui_locales"  // OIDC Core §3.1.2.1
    public static let idTokenHint = "id_token_hint"  // OIDC Core §3.1.2.1
    public static let responseMode = "response_mode"  // OAuth 2.0 Multiple Response Types §2.1
    public static let display = "display"  // OIDC Core §3.1.2.1
    public static let request = "request"  // OIDC Core §6
    public static let redirectURIHTTPSType = "redirect_uri_https_type"  // Singpass: app_claimed_https
    public static let appLaunchURL = "app_launch_url"  // Singpass: where to return to the app
    public static let dpopJKT = "dpop_jkt"  // RFC 9449 §10
    public static let resource = "resource"  // RFC 8707 §2
    public static let requestURI = "request_uri"  // OIDC Core §6
    public static let codeChallenge = "code_challenge"  // RFC 7636 §4.3
    public static let codeChallengeMethod = "code_challenge_method"  // RFC 7636 §4.3
    public static let codeVerifier = "code_verifier"  // RFC 7636 §4.5
    public static let code = "code"  // RFC 6749 §4.1.2
    public static let issuer = "iss"  // RFC 9207 §2
    public static let error = "error"  // RFC 6749 §4.1.2.1
    public static let errorDescription = "error_description"  // RFC 6749 §4.1.2.1
    public static let grantType = "grant_type"  // RFC 6749 §4.1.3
    public static let refreshToken = "refresh_token"  // RFC 6749 §6
    public static let clientAssertion = "client_assertion"  // RFC 7521 §4.2
    public static let clientAssertionType = "client_assertion_type"  // RFC 7521 §4.2
    public static let token = "token"  // RFC 7009 §2.1
    public static let tokenTypeHint = "token_type_hint"  // RFC 7009 §2.1
    public static let postLogoutRedirectURI = "post_logout_redirect_uri"  // RP-Initiated Logout §2

    /// client_assertion_type for JWT client authentication — RFC 7523 §2.2
    public static let jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
}
