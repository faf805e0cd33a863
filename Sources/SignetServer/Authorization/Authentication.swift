// How a user was authenticated: what a grant and its ID tokens say about it.
import Foundation
import SignetCore

/// How the user was authenticated, for `auth_time`, `acr` and `amr`.
public struct Authentication: Sendable, Equatable {
    public var userID: String
    public var time: Date
    /// acr — OIDC Core §2
    public var acr: String
    /// amr — OIDC Core §2, RFC 8176 values (`pwd`, `sms`, `mfa`, …)
    public var amr: [String]
    /// The browser session it belongs to, if any (its public `sid`).
    public var sessionID: String?
    /// The user's security stamp when they authenticated; what is issued from this
    /// authentication stops working when it changes (new password, lock).
    public var userStamp: String?
    /// The activated device the user logged in with (device login): the grant is tied to it.
    public var deviceID: String?

    public init(userID: String, time: Date, acr: String, amr: [String], sessionID: String?, userStamp: String? = nil) {
        self.userStamp = userStamp
        self.userID = userID
        self.time = time
        self.acr = acr
        self.amr = amr
        self.sessionID = sessionID
    }
}

extension Authentication {
    /// `acr` and `amr` for a password, with or without the SMS code (RFC 8176 values).
    static func password(userID: String, twoFactor: Bool, at time: Date, sessionID: String?, userStamp: String?) -> Authentication {
        twoFactor
            ? Authentication(
                userID: userID, time: time, acr: AuthorizationRequestValidator.acrTwoFactors, amr: ["pwd", "sms", "mfa"], sessionID: sessionID,
                userStamp: userStamp)
            : Authentication(
                userID: userID, time: time, acr: AuthorizationRequestValidator.acrOneFactor, amr: ["pwd"], sessionID: sessionID, userStamp: userStamp)
    }

    /// A device login: possession of the activated device's key and a PIN or biometric (`amr`
    /// as the authenticator says, RFC 8176); two factors (``AssuranceLevel/twoFactors``) when the
    /// authenticator was enrolled after a two-factor login, else one.
    static func device(userID: String, instanceID: String, acr: String, amr: [String], at time: Date, userStamp: String?) -> Authentication {
        var authentication = Authentication(userID: userID, time: time, acr: acr, amr: amr, sessionID: nil, userStamp: userStamp)
        authentication.deviceID = instanceID
        return authentication
    }

    /// How a login's proof becomes an authentication.
    static func of(_ proof: LoginProof, userID: String, at time: Date, sessionID: String?, userStamp: String?) -> Authentication {
        switch proof {
        case .password(let twoFactor): return password(userID: userID, twoFactor: twoFactor, at: time, sessionID: sessionID, userStamp: userStamp)
        case .device(let instanceID, let acr, let amr):
            return device(userID: userID, instanceID: instanceID, acr: acr, amr: amr, at: time, userStamp: userStamp)
        }
    }
}
