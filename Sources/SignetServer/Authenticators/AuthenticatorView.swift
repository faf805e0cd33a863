// An authenticator as the endpoints and the device status show it.
import Foundation
import SignetCore
import SignetStore

/// An authenticator for the app and the user: no key, no PIN key.
struct AuthenticatorView: Codable, Sendable, Equatable {
    let aaid: String
    /// base64url KeyID.
    let keyID: String
    let name: String
    /// `pin`, `fingerprint`, `face`, `biometric` or `passcode`.
    let verification: String
    let instanceID: String
    let createdAt: Int
    let lastUsedAt: Int?
    /// A PIN authenticator's state: `unlocked`, `last_attempt_failed` or `locked_out`.
    let pin: PINState?

    init(_ record: AuthenticatorRecord, policy: AuthenticatorPolicy, now: Date) {
        let kind = AuthenticatorCatalog.kind(record.aaid)
        aaid = record.aaid
        keyID = record.keyID
        name = kind?.name ?? record.aaid
        verification = kind?.verification.rawValue ?? "unknown"
        instanceID = record.instanceID
        createdAt = Int(record.createdAt.timeIntervalSince1970)
        lastUsedAt = record.lastUsedAt.map { Int($0.timeIntervalSince1970) }
        if record.pinKey == nil {
            pin = nil
        } else if record.pinFailures == 0 {
            pin = PINState(state: "unlocked", remainingTries: policy.pinMaximumFailures, coolDown: nil)
        } else {
            let wait = record.pinBlockedUntil.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) }
            pin = PINState(
                state: "last_attempt_failed", remainingTries: max(0, policy.pinMaximumFailures - record.pinFailures), coolDown: wait == 0 ? nil : wait
            )
        }
    }

    enum CodingKeys: String, CodingKey {
        case aaid, name, verification, pin
        case keyID = "key_id"
        case instanceID = "instance_id"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
    }
}
