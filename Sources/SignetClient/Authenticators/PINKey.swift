// The key a PIN derives: what proves the PIN to the provider without the phone storing anything that checks it.
import Crypto
import CryptoExtras
import Foundation

/// Derives the P-256 key that proves a PIN (``UAFPINProof``): PBKDF2-HMAC-SHA256 of the PIN
/// under the authenticator's salt, its 32 bytes taken as the private scalar.
///
/// The phone keeps the salt and the rounds, never the PIN nor anything that tells a right PIN
/// from a wrong one, so a stolen phone gives no offline way to test guesses: each guess must
/// go to the provider, which counts it.
public struct PINKeyDerivation: Sendable, Equatable, Codable {
    /// 32 random bytes, kept with the authenticator.
    public var salt: [UInt8]
    /// PBKDF2 rounds (210 000 by default, OWASP's figure for PBKDF2-HMAC-SHA256).
    public var rounds: Int

    public static let defaultRounds = 210_000

    public init(salt: [UInt8], rounds: Int = PINKeyDerivation.defaultRounds) {
        self.salt = salt
        self.rounds = rounds
    }

    /// The key for `pin`; `nil` in the rare case (about 2⁻³²) that the derived bytes are no
    /// P-256 scalar, when enrolment picks another salt.
    public func key(for pin: String) throws -> P256.Signing.PrivateKey? {
        let derived = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(pin.utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return derived.withUnsafeBytes { try? P256.Signing.PrivateKey(rawRepresentation: Array($0)) }
    }

    /// A fresh salt and the key it gives for `pin` (at enrolment or a PIN change).
    public static func enrol(pin: String, rounds: Int = defaultRounds) throws -> (PINKeyDerivation, P256.Signing.PrivateKey) {
        for _ in 0..<8 {
            var generator = SystemRandomNumberGenerator()
            let derivation = PINKeyDerivation(salt: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }, rounds: rounds)
            if let key = try derivation.key(for: pin) { return (derivation, key) }
        }
        throw SignetClientError(.keyUnavailable, isRetryable: false, reason: "no PIN key could be derived")
    }
}
