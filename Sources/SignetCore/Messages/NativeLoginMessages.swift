// The wire messages of the native login API, shared by the provider and the app SDK.

/// What the SMS step shows: where the code went and what the app may do next.
public struct SMSCodeInfo: Sendable, Equatable, Codable {
    /// The phone number with all but two digits hidden.
    public var phoneHint: String
    public var digits: Int
    /// Seconds until the code expires.
    public var expiresIn: Int
    /// Seconds until a new code may be asked for.
    public var resendIn: Int
    /// How many more codes may be sent in this login.
    public var sendsLeft: Int

    public init(phoneHint: String, digits: Int, expiresIn: Int, resendIn: Int, sendsLeft: Int) {
        self.phoneHint = phoneHint
        self.digits = digits
        self.expiresIn = expiresIn
        self.resendIn = resendIn
        self.sendsLeft = sendsLeft
    }

    enum CodingKeys: String, CodingKey {
        case digits
        case phoneHint = "phone_hint"
        case expiresIn = "expires_in"
        case resendIn = "resend_in"
        case sendsLeft = "sends_left"
    }
}

/// Every successful answer of the native login API: the next step and what it needs;
/// `finished` carries the authorization response (RFC 6749 §4.1.2, RFC 9207).
public struct NativeLoginAnswer: Sendable, Equatable, Codable {
    /// The login's handle, a secret the app keeps until the login finishes.
    public var loginSession: String?
    /// next_step: what the app shows now.
    public var nextStep: LoginStep
    public var expiresIn: Int?
    /// The scenarios the app may choose from (at `select_scenario`).
    public var scenarios: [LoginScenario]?
    public var scenario: LoginScenario?
    /// The remembered username, when a Remember-User-ID token skipped the username step.
    public var username: String?
    public var sms: SMSCodeInfo?
    public var authorizationCode: String?
    public var state: String?
    public var iss: String?
    public var redirectURI: String?
    /// A Remember-User-ID token, when `remember_me` was asked for.
    public var rememberToken: String?

    public init(loginSession: String? = nil, nextStep: LoginStep, expiresIn: Int? = nil) {
        self.loginSession = loginSession
        self.nextStep = nextStep
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case scenarios, scenario, username, sms, state, iss
        case loginSession = "login_session"
        case nextStep = "next_step"
        case expiresIn = "expires_in"
        case authorizationCode = "authorization_code"
        case redirectURI = "redirect_uri"
        case rememberToken = "remember_token"
    }
}
