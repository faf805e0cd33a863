// The names of a login's scenarios and steps, shared by the provider, the SDK and the wire.

/// The login scenarios a client may offer: the names MEPi's FSi uses.
public enum LoginScenario: String, Sendable, Codable, CaseIterable {
    /// Username and password, then an SMS one-time code.
    case usernamePasswordSMS = "s_mobile_authn_un_pwd_sms"
    /// Username and password only.
    case usernamePassword = "s_mobile_authn_un_pwd"

    /// Whether the scenario ends with two factors.
    public var isTwoFactor: Bool { self == .usernamePasswordSMS }
}

/// The steps of a login, in the order they can occur, and `finished` when it is done.
///
/// The raw values are the native login API's `next_step` values.
public enum LoginStep: String, Sendable, Codable, CaseIterable {
    /// The app picks a scenario (native API only).
    case selectScenario = "select_scenario"
    /// Username and password.
    case usernamePassword = "username_password"
    /// Password only: the user was remembered (Remember-User-ID).
    case password
    /// The SMS one-time code.
    case smsCode = "sms_code"
    /// A device login's UAF assertion (PIN or biometric on an activated device).
    case deviceAssertion = "device_assertion"
    /// The login is over; the answer carries the authorization response.
    case finished
}
