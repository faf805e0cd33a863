// Where an app keeps its FIDO UAF authenticators: their keys, KeyIDs, counters and PIN state.
import Foundation
import SignetCore

/// Registration options (seed 002), honoured by the Apple key store.
public struct AuthenticatorOptions: Sendable, Codable, Equatable {
    /// A biometric authenticator's key is invalidated when the user adds a fingerprint or face
    /// in the OS settings (someone with the passcode could otherwise add theirs). Default true.
    public var invalidateOnNewOsBiometrics: Bool
    /// The device passcode may stand in for a failed biometric check. Default false.
    public var allowDevicePasscodeAsFallback: Bool

    public init(invalidateOnNewOsBiometrics: Bool = true, allowDevicePasscodeAsFallback: Bool = false) {
        self.invalidateOnNewOsBiometrics = invalidateOnNewOsBiometrics
        self.allowDevicePasscodeAsFallback = allowDevicePasscodeAsFallback
    }
}

/// An authenticator as the phone keeps it. Its key material is a secret: it prints as `****`.
public struct StoredAuthenticator: Sendable, Codable, Equatable, CustomStringConvertible {
    /// `VVVV#MMMM`.
    public var aaid: String
    /// base64url of the KeyID.
    public var keyID: String
    /// The key as its store keeps it: a software key's raw bytes, a Secure Enclave key's handle.
    public var keyMaterial: Data
    /// DER keys and signatures (iOS AAIDs) or raw (Android AAIDs).
    public var der: Bool
    public var signCounter: UInt32
    /// A PIN authenticator's derivation (salt and rounds; never the PIN).
    public var pin: PINKeyDerivation?
    /// The PIN's schedule as the app last knew it (the provider keeps the authoritative one).
    public var pinGuard: PINGuard
    public var options: AuthenticatorOptions

    public init(aaid: String, keyID: String, keyMaterial: Data, der: Bool, pin: PINKeyDerivation?, options: AuthenticatorOptions) {
        self.aaid = aaid
        self.keyID = keyID
        self.keyMaterial = keyMaterial
        self.der = der
        self.signCounter = 0
        self.pin = pin
        self.pinGuard = PINGuard()
        self.options = options
    }

    public var description: String { "StoredAuthenticator(\(aaid), \(keyID), ****)" }
}

/// Keeps an app's authenticators and makes their keys.
///
/// ``SoftwareAuthenticatorKeyStore`` (sealed file) on Linux and in command-line tools,
/// ``MemoryAuthenticatorKeyStore`` in tests, and on Apple platforms
/// `SecureEnclaveAuthenticatorKeyStore`, whose biometric keys the OS guards (Touch ID, Face ID,
/// the passcode) and wipes when the device lock is removed or, with
/// ``AuthenticatorOptions/invalidateOnNewOsBiometrics``, when biometrics change.
public protocol AuthenticatorKeyStore: Sendable {
    /// A new UAuth key for `aaid` (not kept until ``save(_:)``): its signer and its key material.
    func makeKey(aaid: String, der: Bool, options: AuthenticatorOptions) async throws -> (signer: any UAFSigner, keyMaterial: Data)
    /// The signer of a kept authenticator, after the OS verified the user when its key needs that
    /// (`reason` is shown in the prompt).
    ///
    /// - Throws: ``SignetClientError/Code/authenticatorInvalidated`` when the OS wiped or
    ///   invalidated the key (lock screen removed, biometrics changed).
    func signer(for authenticator: StoredAuthenticator, reason: String) async throws -> any UAFSigner
    func all() async throws -> [StoredAuthenticator]
    /// Keeps `authenticator`, replacing the one with its KeyID.
    func save(_ authenticator: StoredAuthenticator) async throws
    /// Forgets the authenticator with this KeyID (and deletes its key); none is not an error.
    func delete(keyID: String) async throws
    /// Adds one to the authenticator's signature counter and keeps it, atomically (two logins
    /// at once must not send the same value, or the provider sees a clone); the authenticator as kept.
    func advanceCounter(keyID: String) async throws -> StoredAuthenticator
}

extension StoredAuthenticator {
    /// Missing from a store's list: it is not registered here.
    static func notKept(_ keyID: String) -> SignetClientError {
        SignetClientError(.authenticatorNotRegistered, isRetryable: false, reason: "no authenticator with this KeyID on this phone")
    }
}
