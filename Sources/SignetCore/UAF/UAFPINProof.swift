// Signet's PIN extensions to UAF: how a PIN authenticator proves its PIN to the server too.
import Crypto

/// The server-guarded PIN (docs/authenticators.md).
///
/// At enrolment the app derives a P-256 key pair from the PIN and a random salt kept on the
/// phone (PBKDF2-HMAC-SHA256, then the bytes as the private scalar) and registers the public
/// key in the Key Registration Data (`signet-pin-key`). Each authentication signs
/// ``message(finalChallengeHash:keyID:)`` with the key derived from the PIN typed, inside the
/// signed data (`signet-pin-proof`), so a wrong PIN is known to the server, which counts it and
/// applies the cool-down. Neither the phone nor the server holds anything that checks a PIN
/// guess offline: the phone keeps only the salt, the server only the public key.
public enum UAFPINProof {
    /// In the Key Registration Data: the PIN public key, X9.62 uncompressed (65 bytes).
    public static let keyExtension = "signet-pin-key"
    /// In the signed data: a DER ECDSA signature of ``message(finalChallengeHash:keyID:)`` by the PIN key.
    public static let proofExtension = "signet-pin-proof"
    /// In the signed data of a PIN change: the new PIN public key, X9.62 uncompressed.
    public static let newKeyExtension = "signet-new-pin-key"

    /// What the PIN key signs: bound to this request's challenge (through the final challenge hash) and this key.
    public static func message(finalChallengeHash: [UInt8], keyID: [UInt8]) -> [UInt8] {
        Array("signet-pin-proof-v1".utf8) + finalChallengeHash + keyID
    }

    /// Whether `signature` (DER) by the PIN key `publicKey` (X9.62) proves the PIN for this assertion.
    public static func isValid(_ signature: [UInt8], publicKey: [UInt8], finalChallengeHash: [UInt8], keyID: [UInt8]) -> Bool {
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey),
            let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        else { return false }
        return key.isValidSignature(parsed, for: message(finalChallengeHash: finalChallengeHash, keyID: keyID))
    }

    /// Whether `bytes` are an uncompressed P-256 point (a PIN key as registered).
    public static func isPublicKey(_ bytes: [UInt8]) -> Bool {
        bytes.count == 65 && bytes.first == 0x04 && (try? P256.Signing.PublicKey(x963Representation: bytes)) != nil
    }
}
