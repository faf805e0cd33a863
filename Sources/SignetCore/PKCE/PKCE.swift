// Proof Key for Code Exchange (RFC 7636).
import Crypto
import Foundation

/// PKCE with the `S256` method, the only one Signet accepts (RFC 7636 §4.2).
public enum PKCE {
    /// code_challenge_method — RFC 7636 §4.3. `plain` is refused.
    public static let method = "S256"

    /// A fresh code_verifier — RFC 7636 §4.1: 43 characters of base64url (256 bits).
    public static func makeVerifier(random: SecureRandom = SecureRandom()) -> String {
        random.token(byteCount: 32)
    }

    /// code_challenge = BASE64URL(SHA256(ASCII(code_verifier))) — RFC 7636 §4.2.
    public static func challenge(for verifier: String) -> String {
        Data(SHA256.hash(data: Data(verifier.utf8))).base64URLEncodedString()
    }

    /// Whether a code_verifier is well formed: 43–128 characters of `[A-Z a-z 0-9 - . _ ~]` (RFC 7636 §4.1).
    public static func isWellFormedVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy(isUnreserved)
    }

    /// Whether a code_challenge is the form S256 yields: 43 characters of base64url.
    public static func isWellFormedChallenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && Data(base64URLEncoded: challenge)?.count == 32
    }

    /// Checks a verifier against a stored S256 challenge in constant time.
    public static func verify(verifier: String, challenge: String) -> Bool {
        guard isWellFormedVerifier(verifier) else { return false }
        return ConstantTime.equals(Self.challenge(for: verifier), challenge)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default: return false
        }
    }
}

/// Comparisons whose time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Compares two strings' UTF-8 bytes in time that depends only on their lengths.
    public static func equals(_ lhs: String, _ rhs: String) -> Bool {
        equals(Array(lhs.utf8), Array(rhs.utf8))
    }

    /// Compares two byte arrays in time that depends only on their lengths.
    public static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
