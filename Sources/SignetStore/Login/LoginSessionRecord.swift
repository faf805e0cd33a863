// A login in progress: the authorization request and how far the user has come.
import Foundation
import SignetCore

/// An SMS one-time code sent during a login. The code itself is never stored, only its keyed hash.
public struct SMSChallenge: Sendable, Equatable {
    /// HMAC-SHA256 of the code under the provider's OTP key, bound to the login session.
    public var codeDigest: String
    public var phoneNumber: String
    public var expiresAt: Date
    /// Codes checked against this one. Counted when a submission claims the step, before the
    /// code is compared, so a guess is never checked without being counted.
    public var attempts: Int
    /// How many codes were sent in this login (the first and every resend).
    public var sends: Int
    public var lastSentAt: Date
    /// Whether the last send failed (then a new send may be asked for at once, within the limit).
    public var deliveryFailed: Bool

    public init(
        codeDigest: String, phoneNumber: String, expiresAt: Date, attempts: Int = 0, sends: Int = 1, lastSentAt: Date, deliveryFailed: Bool = false
    ) {
        self.codeDigest = codeDigest
        self.phoneNumber = phoneNumber
        self.expiresAt = expiresAt
        self.attempts = attempts
        self.sends = sends
        self.lastSentAt = lastSentAt
        self.deliveryFailed = deliveryFailed
    }
}

/// A login in progress, on the hosted page or through the native login API.
///
/// Every change is written with the version it was read at, so of two concurrent
/// submissions of one step exactly one is applied. The rules that change it live in
/// ``LoginFlow``. Stored as JSON with explicit keys (logins live minutes, so none is migrated
/// when the layout changes).
public struct LoginSessionRecord: Sendable, Equatable {
    /// Where the login happens.
    public enum Channel: String, Sendable, Codable {
        case page, api
        /// A device login (MEPi biometric login): an activated device's UAF authenticator.
        case device
    }

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
    /// The user's security stamp when the password was checked; the login finishes only while
    /// it is unchanged (a password change or a lock in the meantime ends it).
    public var userStamp: String?
    /// Whether the user was remembered by a Remember-User-ID token (the username step is skipped).
    public var remembered: Bool
    /// Whether a Remember-User-ID token should be issued when the login finishes.
    public var rememberMe: Bool
    /// Passwords checked in this login, counted when a submission claims the step.
    public var passwordAttempts: Int
    /// While a claimed password is being checked: other submissions of the step are refused
    /// until the check is done (or this time passes, should the checking server die).
    public var checkingUntil: Date?
    public var sms: SMSChallenge?
    /// Page only: the `sid` of the browser session offered on the "Continue as" page (RFC 8252 §8.6).
    public var offeredSessionSID: String?
    /// The UI language asked for.
    public var language: String?
    /// Device login only: the activated device it was started from (and must finish from).
    public var deviceInstanceID: String?
    public var expiresAt: Date
    /// Incremented by every change.
    public var version: Int

    public init(
        id: String, channel: Channel, request: ValidatedAuthorizationRequest, browserBindingHash: String? = nil, csrfToken: String? = nil,
        step: LoginStep, scenario: LoginScenario? = nil, userID: String? = nil, remembered: Bool = false, rememberMe: Bool = false,
        passwordAttempts: Int = 0, sms: SMSChallenge? = nil, language: String? = nil, expiresAt: Date, version: Int = 0
    ) {
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
        self.passwordAttempts = passwordAttempts
        self.sms = sms
        self.language = language
        self.expiresAt = expiresAt
        self.version = version
    }
}

extension SMSChallenge: StoredRecord {
    /// A part of the login session (version 0: the session's version covers it).
    public static let format = RecordFormat(
        version: 0, blank: SMSChallenge(codeDigest: "", phoneNumber: "", expiresAt: .distantPast, lastSentAt: .distantPast),
        [
            .member("code_digest", \.codeDigest), .member("phone_number", \.phoneNumber), .member("expires_at", \.expiresAt),
            .member("attempts", \.attempts), .member("sends", \.sends), .member("last_sent_at", \.lastSentAt),
            .member("delivery_failed", \.deliveryFailed),
        ])
}

extension LoginSessionRecord.Channel: StoredValue {}
extension LoginStep: StoredValue {}
extension LoginScenario: StoredValue {}

extension LoginSessionRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1,
        blank: LoginSessionRecord(
            id: "", channel: .page, request: ValidatedAuthorizationRequest.format.blank, step: .selectScenario, expiresAt: .distantPast),
        [
            .member("id", \.id), .member("channel", \.channel), .member("request", \.request),
            .member("browser_binding_hash", \.browserBindingHash), .member("csrf_token", \.csrfToken), .member("step", \.step),
            .member("scenario", \.scenario), .member("user_id", \.userID), .member("user_stamp", \.userStamp),
            .member("remembered", \.remembered), .member("remember_me", \.rememberMe), .member("password_attempts", \.passwordAttempts),
            .member("checking_until", \.checkingUntil), .member("sms", \.sms), .member("offered_session_sid", \.offeredSessionSID),
            .member("language", \.language), .member("device_instance_id", \.deviceInstanceID), .member("expires_at", \.expiresAt),
            .member("version", \.version),
        ])
}
