// What can happen to a login: a user's submission, or the outcome of work a channel did for the flow.
import Foundation
import SignetCore

/// An input to ``LoginFlow``.
///
/// Submissions come from the channel (page form, native API call); the other events report
/// the outcome of an action the flow asked for (a password check, a code made, a delivery).
enum LoginEvent: Sendable, Equatable {
    /// The app chose a scenario, from `offered` (what the client may use for this request).
    case chooseScenario(LoginScenario, offered: [LoginScenario])
    /// A username (`nil` for a remembered user, whose name the login already knows) and a password.
    case submitPassword(username: String?, rememberMe: Bool)
    /// What the throttled password check found.
    case passwordChecked(PasswordCheck)
    /// A code to send was made; `digest` is its keyed hash, `phoneNumber` where it goes.
    case codeMade(digest: String, phoneNumber: String)
    /// The code could not be delivered.
    case deliveryFailed
    /// The user asks for a new code.
    case requestResend
    /// A code was submitted; `digest` is its keyed hash (made by the channel, which holds the key).
    case submitCode(code: String, digest: String)
    /// A device login's UAF assertion was verified (signature, challenge spent, PIN): by this
    /// user's authenticator on this device, with this RFC 8176 `amr`.
    case deviceAssertionVerified(userID: String, instanceID: String, acr: String, amr: [String])
}

/// The outcome of a throttled password check.
enum PasswordCheck: Sendable, Equatable {
    /// Right: the user, the phone number the second factor would use, and the user's security
    /// stamp (the login may finish only while it is unchanged).
    case accepted(userID: String, phoneNumber: String?, securityStamp: String? = nil)
    /// Wrong name or password; deliberately not which.
    case rejected
    /// Right, but the account is locked (said only to someone who knows the password).
    case locked
    /// Too many failures: the check did not run.
    case paused(seconds: TimeInterval)
}
