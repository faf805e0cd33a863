// A login in progress: the authorization request and how far the user has come.
import Foundation

/// The login scenarios a client may offer — the names MEPi's FSi uses.
public enum LoginScenario: String, Sendable, Codable, CaseIterable {
    /// Username and password, then an SMS one-time code.
    case usernamePasswordSMS = "s_mobile_authn_un_pwd_sms"
    /// Username and password only.
    case usernamePassword = "s_mobile_authn_un_pwd"

    /// Whether the scenario ends with two factors.
    public var isTwoFactor: Bool { self == .usernamePasswordSMS }
}

/// The steps of a login, in the order they can occur.
public enum LoginStep: String, Sendable, Codable {
    /// The app picks a scenario (API only).
    case selectScenario = "select_scenario"
    /// Username and password.
    case usernamePassword = "username_password"
    /// Password only: the user was remembered (Remember-User-ID).
    case password
    /// The SMS one-time code.
    case smsCode = "sms_code"
}

/// An SMS one-time code sent during a login. The code itself is never stored, only its keyed hash.
public struct SMSChallenge: Sendable, Equatable, Codable {
    /// HMAC-SHA256 of the code under the provider's OTP key, bound to the login session.
    public var codeDigest: String
    public var phoneNumber: String
    public var expiresAt: Date
    public var wrongAttempts: Int
    /// How many codes were sent in this login (the first and every resend).
    public var sends: Int
    public var lastSentAt: Date
    /// Whether the last send failed (then a new send may be asked for at once, within the limit).
    public var deliveryFailed: Bool?

    public init(codeDigest: String, phoneNumber: String, expiresAt: Date, wrongAttempts: Int = 0, sends: Int = 1, lastSentAt: Date, deliveryFailed: Bool? = nil) {
        self.codeDigest = codeDigest
        self.phoneNumber = phoneNumber
        self.expiresAt = expiresAt
        self.wrongAttempts = wrongAttempts
        self.sends = sends
        self.lastSentAt = lastSentAt
        self.deliveryFailed = deliveryFailed
    }
}

/// A login in progress, on the hosted page or through the native login API.
///
/// Every change is written with the version it was read at, so of two concurrent
/// submissions of one step exactly one is applied.
public struct LoginSessionRecord: Sendable, Equatable, Codable {
    /// Where the login happens.
    public enum Channel: String, Sendable, Codable { case page, api }

    /// SHA-256 of the session's handle (the form's hidden value, or the API's `login_session`).
    public var id: String
    public var channel: Channel
    public var request: ValidatedAuthorizationRequest
    /// Page only: SHA-256 of the browser-binding cookie value.
    public var browserBindingHash: String?
    /// Page only: the form's anti-CSRF token.
    public var csrfToken: String?
    public var step: LoginStep
    public var scenario: LoginScenario?
    /// The user, once the password was right (or when remembered).
    public var userID: String?
    /// Whether the user was remembered by a Remember-User-ID token (the username step is skipped).
    public var remembered: Bool
    /// Whether a Remember-User-ID token should be issued when the login finishes.
    public var rememberMe: Bool
    public var sms: SMSChallenge?
    /// The UI language asked for.
    public var language: String?
    public var expiresAt: Date
    /// Incremented by every change.
    public var version: Int

    public init(id: String, channel: Channel, request: ValidatedAuthorizationRequest, browserBindingHash: String? = nil, csrfToken: String? = nil, step: LoginStep, scenario: LoginScenario? = nil, userID: String? = nil, remembered: Bool = false, rememberMe: Bool = false, sms: SMSChallenge? = nil, language: String? = nil, expiresAt: Date, version: Int = 0) {
        self.id = id
        self.channel = channel
        self.request = request
        self.browserBindingHash = browserBindingHash
        self.csrfToken = csrfToken
        self.step = step
        self.scenario = scenario
        self.userID = userID
        self.remembered = remembered
        self.rememberMe = rememberMe
        self.sms = sms
        self.language = language
        self.expiresAt = expiresAt
        self.version = version
    }
}

/// A Remember-User-ID token (NemID): names a user to one client, but proves nothing.
public struct RememberTokenRecord: Sendable, Equatable, Codable {
    public var tokenHash: String
    public var clientID: String
    public var userID: String
    public var createdAt: Date
    public var expiresAt: Date

    public init(tokenHash: String, clientID: String, userID: String, createdAt: Date, expiresAt: Date) {
        self.tokenHash = tokenHash
        self.clientID = clientID
        self.userID = userID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
