// What the login flow decided: the login to store and what the channel does next.
import Foundation
import SignetCore
import SignetStore

/// The result of one ``LoginFlow`` event.
///
/// When ``save`` is set, the channel must store it over the version it read *before* it acts
/// (and before it tells the user anything): the write is the claim of the step and carries
/// the attempt counted, so a request that loses the race is answered with a conflict and its
/// guess is never revealed.
struct LoginTransition: Sendable, Equatable {
    /// The login to write, or `nil` when nothing changes.
    var save: LoginSessionRecord?
    var action: LoginAction
    /// Whether this transition reveals the result of checking a code (the channel charges the
    /// account's daily budget of wrong codes before it stores and answers).
    var checksCode: Bool = false
}

/// What the channel does after storing a transition.
enum LoginAction: Sendable, Equatable {
    /// Run the throttled password check for this name, then feed ``LoginEvent/passwordChecked(_:)``.
    case checkPassword(username: String)
    /// Make a fresh code for this phone (`nil`: the user's phone) after charging the account's
    /// send budget, then feed ``LoginEvent/codeMade(digest:phoneNumber:)``.
    case makeCode(phoneNumber: String?)
    /// Send the code just stored; on failure feed ``LoginEvent/deliveryFailed``.
    case deliver
    /// Show the login's current step.
    case show
    /// End the login with an authorization code for this user, proved this way.
    case finish(userID: String, proof: LoginProof)
    /// Answer with this reason; the login goes on (the step may be tried again when the reason allows).
    case refuse(LoginRefusal)
    /// Delete the login and answer with this reason.
    case abandon(LoginRefusal)
}

/// What a finished login proved.
enum LoginProof: Sendable, Equatable {
    /// The password, and the SMS code when `twoFactor`.
    case password(twoFactor: Bool)
    /// An activated device's authenticator (device login), with the `acr` it may assert and its RFC 8176 `amr`.
    case device(instanceID: String, acr: String, amr: [String])
}

/// Why a login step was not applied. Channels turn these into page messages or API errors.
enum LoginRefusal: Sendable, Equatable {
    /// The login is at another step.
    case wrongStep(expected: LoginStep)
    /// Another submission of this step is being checked right now.
    case stepInProgress
    /// The scenario is not one the client may use for this request.
    case scenarioNotAllowed(LoginScenario)
    /// Username or password missing or too long.
    case missingCredentials
    /// Wrong name or password.
    case invalidCredentials
    /// The account is locked by an administrator.
    case accountLocked
    /// The user was locked, removed or given a new password while this login was in progress.
    case accountChanged
    /// Too many passwords tried in this one login: start again.
    case loginAttemptsExhausted
    /// Too many failed sign-ins for this name or address.
    case paused(seconds: TimeInterval)
    /// The password was right for another user than the remembered one.
    case rememberedUserChanged
    /// Two factors are needed and the user has no phone.
    case noSecondFactor
    /// `id_token_hint` named another user (OIDC Core §3.1.2.1).
    case wrongUser
    /// There is no delivered code to check.
    case codeNotSent
    /// The submission does not have the form of a code (not counted).
    case malformedCode(digits: Int)
    /// Wrong code; this many tries left for it.
    case wrongCode(attemptsLeft: Int)
    /// Too many wrong tries: this code is dead. `canResend`: a new code may be asked for.
    case codeAttemptsExhausted(canResend: Bool)
    case codeExpired
    /// A new code may be sent after this many seconds.
    case resendTooEarly(seconds: TimeInterval)
    /// No more codes in this login.
    case resendLimitReached
    /// The code could not be delivered; a new one may be asked for.
    case deliveryFailed
    /// The account's own budget (wrong codes per day, sends per hour) is spent.
    case accountLimit(AccountLimit, retryAfter: TimeInterval)
}
