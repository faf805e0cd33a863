// What vouches for a device key before its first login: App Attest, Play Integrity, or (in development) nothing.
import Crypto
import Foundation

/// What an app sends with its first certificate request, for an ``AttestationVerifier`` to judge.
public struct AttestationEvidence: Sendable {
    /// The client (app) asking.
    public let clientID: String
    /// The instance id the certificate will name.
    public let instanceID: String
    /// `ios`, `android`, … as the app said (unverified).
    public let platform: String?
    /// The attestation object as sent (base64url-decoded); `nil` when the app sent none.
    public let attestation: [UInt8]?
    /// The device key the certificate signing request proved possession of: an attestation must vouch for this key.
    public let publicKey: P256.Signing.PublicKey
}

/// A verifier's verdict on an attestation.
public struct AttestationResult: Sendable, Equatable {
    /// What vouched for the key, recorded with the device and carried by its tokens
    /// (`attestation`): `none`, or e.g. `apple-app-attest`, `play-integrity`.
    public let kind: String

    public init(kind: String) { self.kind = kind }

    /// The kinds that vouch for a hardware-held key (a device login then says `hwk`, RFC 8176):
    /// App Attest's key lives in the Secure Enclave, an Android key attestation names its
    /// security level. Play Integrity judges the app and device, not the key.
    public static let hardwareKeyKinds: Set<String> = ["apple-app-attest", "android-key-attestation"]

    /// Nothing vouched for the key.
    public static let none = AttestationResult(kind: "none")
}

/// Judges attestation evidence before an initial certificate is issued.
///
/// Throw ``AttestationRefusal`` to refuse (the app gets `400 invalid_request` with the reason).
/// A production verifier checks, for App Attest, the attestation object's certificate chain to
/// Apple's root, the app id (team id + bundle id of `clientID`'s app), that the attested key's
/// hash binds ``AttestationEvidence/publicKey`` (e.g. through the client data hash), and keeps
/// the counter; for Play Integrity, the integrity token's signature, package name, certificate
/// digest and a nonce derived from the instance id and key. See docs/devices.md.
public protocol AttestationVerifier: Sendable {
    func verify(_ evidence: AttestationEvidence) async throws -> AttestationResult
}

/// A verifier's refusal, with a reason the app may see.
public struct AttestationRefusal: Error, Sendable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}

/// For development and tests: accepts everything and records that nothing vouched (`none`).
public struct DevelopmentAttestationVerifier: AttestationVerifier {
    public init() {}
    public func verify(_ evidence: AttestationEvidence) async throws -> AttestationResult { .none }
}
