// An authorization request that passed every check (OIDC Core §3.1.2.1, RFC 7636, RFC 8252).
import SignetCore

/// The parameters of an authorization request after validation.
///
/// Built only by SignetServer's `AuthorizationRequestValidator`; every login channel starts from
/// this value, and a login in progress stores it.
public struct ValidatedAuthorizationRequest: Sendable, Equatable {
    /// client_id — RFC 6749 §4.1.1
    public var clientID: String
    /// redirect_uri — RFC 6749 §3.1.2, exactly as sent (it must be sent again at the token endpoint).
    public var redirectURI: String
    /// scope — RFC 6749 §3.3, normalised: known scopes, no repeats, space separated.
    public var scope: String
    /// state — RFC 6749 §4.1.1
    public var state: String?
    /// nonce — OIDC Core §3.1.2.1
    public var nonce: String?
    /// code_challenge — RFC 7636 §4.2 (method always S256)
    public var codeChallenge: String
    /// prompt — OIDC Core §3.1.2.1
    public var prompt: [String]
    /// max_age — OIDC Core §3.1.2.1, seconds
    public var maxAge: Int?
    /// login_hint — OIDC Core §3.1.2.1
    public var loginHint: String?
    /// acr_values — OIDC Core §3.1.2.1, in order of preference
    public var acrValues: [String]
    /// ui_locales — OIDC Core §3.1.2.1, in order of preference
    public var uiLocales: [String]
    /// id_token_hint's subject, when a valid hint was sent.
    public var idTokenHintSubject: String?
    /// The client's minimum assurance (`min_acr` of its registration), whatever `acr_values` says.
    public var minimumACR: String?
    /// redirect_uri_https_type=app_claimed_https (Singpass): the redirect goes to a claimed https
    /// URI (a universal or app link), which opens the app only from a user's tap, so the final
    /// redirect is a page with a "Return to the app" link instead of an HTTP redirect.
    public var returnByLink: Bool?
    /// app_launch_url (Singpass): where an authenticator app returns the user to, once it is done
    /// (https, registered for the client); kept for the app switch.
    public var appLaunchURL: String?
    /// dpop_jkt — RFC 9449 §10: the DPoP key the code will be bound to.
    public var dpopJKT: String?
    /// resource — RFC 8707 §2: the resources the tokens are for.
    public var resources: [String]?
    /// The app installation this login activates (scope `device`): its instance id, sent as the
    /// `nonce` or in a `claims` request for `instance_id`.
    public var instanceID: String?

    public init(
        clientID: String, redirectURI: String, scope: String, state: String?, nonce: String?, codeChallenge: String, prompt: [String] = [],
        maxAge: Int? = nil, loginHint: String? = nil, acrValues: [String] = [], uiLocales: [String] = [], idTokenHintSubject: String? = nil
    ) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.prompt = prompt
        self.maxAge = maxAge
        self.loginHint = loginHint
        self.acrValues = acrValues
        self.uiLocales = uiLocales
        self.idTokenHintSubject = idTokenHintSubject
    }

    public var scopes: [String] { scope.split(separator: " ").map(String.init) }

    /// Whether the login must use two factors: asked for in `acr_values`, or required by the client.
    public var requiresTwoFactors: Bool {
        acrValues.contains(AssuranceLevel.twoFactors) || minimumACR == AssuranceLevel.twoFactors
    }
}

extension ValidatedAuthorizationRequest: StoredRecord {
    /// A part of the login session (version 0: the session's version covers it).
    public static let format = RecordFormat(
        version: 0, blank: ValidatedAuthorizationRequest(clientID: "", redirectURI: "", scope: "", state: nil, nonce: nil, codeChallenge: ""),
        [
            .member("clientID", \.clientID), .member("redirectURI", \.redirectURI), .member("scope", \.scope), .member("state", \.state),
            .member("nonce", \.nonce), .member("codeChallenge", \.codeChallenge), .member("prompt", \.prompt), .member("maxAge", \.maxAge),
            .member("loginHint", \.loginHint), .member("acrValues", \.acrValues), .member("uiLocales", \.uiLocales),
            .member("idTokenHintSubject", \.idTokenHintSubject), .member("minimumACR", \.minimumACR), .member("returnByLink", \.returnByLink),
            .member("appLaunchURL", \.appLaunchURL), .member("dpopJKT", \.dpopJKT), .member("resources", \.resources),
            .member("instanceID", \.instanceID),
        ])
}
