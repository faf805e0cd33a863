// What the provider stores about FIDO UAF authenticators registered on activated devices.
import Foundation

/// A FIDO UAF authenticator registered on an activated device: its key and its state.
///
/// The key, the algorithms and the PIN key live in the JSON record; what changes with every use
/// (the signature counter, the PIN failures and cool-down, the last use) lives in columns of
/// its own in the SQL store, changed by single statements.
public struct AuthenticatorRecord: Sendable, Equatable {
    /// Signet's id for it (random).
    public var id: String
    public var userID: String
    /// The activated device (instance id) it lives on.
    public var instanceID: String
    public var clientID: String
    /// `VVVV#MMMM` (upper case).
    public var aaid: String
    /// base64url of the KeyID; unique per user.
    public var keyID: String
    /// The UAuth public key as registered (base64url), in ``publicKeyFormat``.
    public var publicKey: String
    public var signatureAlgorithm: UInt16
    public var publicKeyFormat: UInt16
    /// Its place among the device's authenticators (1…the per-device maximum); unique per device,
    /// so concurrent registrations cannot exceed the maximum.
    public var slot: Int
    public var signCounter: UInt32
    public var registrationCounter: UInt32
    /// For a PIN authenticator: the public key (X9.62, base64url) whose signatures prove the PIN (docs/authenticators.md).
    public var pinKey: String?
    /// Wrong PIN proofs in a row.
    public var pinFailures: Int
    /// No PIN proof is checked before this time.
    public var pinBlockedUntil: Date?
    /// Set when a non-zero signature counter failed to increase: possibly cloned, refused from then on.
    public var cloneSuspectedAt: Date?
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// The user's security stamp when it was registered: a new password or a lock since (a new
    /// stamp) ends it, so a password thief's authenticator does not outlive the new password.
    public var userStamp: String?
    /// The `acr` of the login it was registered after: a device login asserts no more than that.
    public var registrationACR: String?

    public init(
        id: String, userID: String, instanceID: String, clientID: String, aaid: String, keyID: String, publicKey: String, signatureAlgorithm: UInt16,
        publicKeyFormat: UInt16, slot: Int, signCounter: UInt32, registrationCounter: UInt32, pinKey: String?, createdAt: Date
    ) {
        self.id = id
        self.userID = userID
        self.instanceID = instanceID
        self.clientID = clientID
        self.aaid = aaid
        self.keyID = keyID
        self.publicKey = publicKey
        self.signatureAlgorithm = signatureAlgorithm
        self.publicKeyFormat = publicKeyFormat
        self.slot = slot
        self.signCounter = signCounter
        self.registrationCounter = registrationCounter
        self.pinKey = pinKey
        self.pinFailures = 0
        self.createdAt = createdAt
    }
}

/// What recording an authenticator's signature counter found.
public enum CounterUpdate: Sendable, Equatable {
    /// Stored (or zero, which Nevis' authenticators always send and which is not checked).
    case accepted
    /// A non-zero counter that did not increase: the authenticator is now marked as possibly cloned.
    case regressed
    /// The authenticator is gone (removed meanwhile).
    case unknown
}

/// What counting a wrong PIN proof found.
public enum PINFailureOutcome: Sendable, Equatable {
    /// Counted: this many failures in a row, and when the next proof may be checked.
    case counted(failures: Int, blockedUntil: Date?)
    /// Not counted: a cool-down is running (or the authenticator is gone).
    case coolingDown(until: Date?)
}

/// FIDO UAF authenticators.
public protocol AuthenticatorStore: Sendable {
    /// Adds an authenticator in the first free slot of its device, at most `maximumPerDevice`;
    /// `nil` when the device is full. Throws `SignetError(.conflict)` when the user has the KeyID
    /// already or the device has an authenticator of this AAID (one of each per device, atomically).
    func insertAuthenticator(_ authenticator: AuthenticatorRecord, maximumPerDevice: Int) async throws -> AuthenticatorRecord?
    func authenticator(userID: String, keyID: String) async throws -> AuthenticatorRecord?
    func authenticator(id: String) async throws -> AuthenticatorRecord?
    /// A device's authenticators, by slot.
    func authenticators(instanceID: String) async throws -> [AuthenticatorRecord]
    /// A user's authenticators, oldest first.
    func authenticators(userID: String) async throws -> [AuthenticatorRecord]
    /// Removes one; returns it, or `nil` when it was gone (exactly one concurrent caller gets it).
    func deleteAuthenticator(id: String) async throws -> AuthenticatorRecord?
    /// Records a use with `signCounter`, in one statement: a counter must exceed the stored one,
    /// or be zero while the stored one is zero (an authenticator without a counter, as Nevis').
    func recordAuthenticatorUse(id: String, signCounter: UInt32, at: Date) async throws -> CounterUpdate
    /// Counts one wrong PIN proof unless a cool-down runs at `now` (one statement, so parallel
    /// guesses are each counted and none slips past a cool-down). `coolDowns[n-1]` is the wait
    /// after the n-th failure in a row.
    /// Only while the PIN key is still `pinKey` (the one the proof was checked against).
    func recordPINFailure(id: String, pinKey: String, at now: Date, coolDowns: [TimeInterval]) async throws -> PINFailureOutcome
    /// Accepts a right PIN proof: resets the failures, unless a cool-down runs at `now`,
    /// `maximumFailures` were reached or the PIN key is no longer `pinKey`; `false` then (and the
    /// proof counts for nothing).
    func acceptPIN(id: String, pinKey: String, at now: Date, maximumFailures: Int) async throws -> Bool
    /// Replaces the PIN key `from` (the one the change was proved with) by `to`, resetting the
    /// failures; `false` when the key is no longer `from` (another change came first).
    func replacePINKey(id: String, from old: String, to new: String) async throws -> Bool
}

extension AuthenticatorRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1,
        blank: AuthenticatorRecord(
            id: "", userID: "", instanceID: "", clientID: "", aaid: "", keyID: "", publicKey: "", signatureAlgorithm: 0, publicKeyFormat: 0, slot: 0,
            signCounter: 0, registrationCounter: 0, pinKey: nil, createdAt: .distantPast),
        [
            .member("id", \.id), .member("user_id", \.userID), .member("instance_id", \.instanceID), .member("client_id", \.clientID),
            .member("aaid", \.aaid), .member("key_id", \.keyID), .member("public_key", \.publicKey),
            .member("signature_algorithm", \.signatureAlgorithm), .member("public_key_format", \.publicKeyFormat), .member("slot", \.slot),
            .member("sign_counter", \.signCounter), .member("registration_counter", \.registrationCounter), .member("pin_key", \.pinKey),
            .member("pin_failures", \.pinFailures), .member("pin_blocked_until", \.pinBlockedUntil),
            .member("clone_suspected_at", \.cloneSuspectedAt), .member("created_at", \.createdAt), .member("last_used_at", \.lastUsedAt),
            .member("user_stamp", \.userStamp), .member("registration_acr", \.registrationACR),
        ])
}
