// SMS one-time codes: made uniformly at random, stored only as a keyed hash, checked in constant time.
import Crypto
import Foundation
import SignetCore

/// Makes and checks one-time codes.
public enum OneTimeCodes {
    /// `digits` decimal digits, each uniformly random (rejection sampling, no modulo bias).
    public static func make(digits: Int, random: SecureRandom) -> String {
        var code = ""
        while code.count < digits {
            for byte in random.bytes(digits * 2) where byte < 250 && code.count < digits {
                code.append(Character(String(byte % 10)))
            }
        }
        return code
    }

    /// HMAC-SHA256 of the code bound to the login session, hex: what is stored instead of the code.
    public static func digest(_ code: String, session: String, key: SymmetricKey) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(session):\(code)".utf8), using: key)
        return Data(mac).hexEncodedString()
    }

    /// The text of the message: names the service and the purpose, and ends with the
    /// origin-bound line (`@host #code`) that lets phones autofill it for this site only.
    public static func message(code: String, clientName: String, issuer: String) -> String {
        let host = URL(string: issuer)?.host ?? issuer
        return "\(code) is your code to sign in to \(clientName) with Signet. Never share it.\n\n@\(host) #\(code)"
    }

    /// A phone number with all but the last two digits hidden.
    public static func hint(_ phoneNumber: String) -> String {
        "•••• " + String(phoneNumber.filter(\.isNumber).suffix(2))
    }
}
