// Base64url without padding (RFC 4648 §5), as JOSE, PKCE and UAF use it.
// Written by hand over bytes: Foundation's base64 wants padding and the standard alphabet,
// and converting through it (string replacements, Character tests) cost more than the work.
import Foundation

extension Data {
    /// The unpadded base64url text of these bytes (RFC 4648 §5).
    public func base64URLEncodedString() -> String {
        let alphabet = Base64URL.alphabet
        var output: [UInt8] = []
        output.reserveCapacity((count * 4 + 2) / 3)
        var index = startIndex
        while index < endIndex {
            let remaining = distance(from: index, to: endIndex)
            let b0 = self[index]
            let b1 = remaining > 1 ? self[self.index(index, offsetBy: 1)] : 0
            let b2 = remaining > 2 ? self[self.index(index, offsetBy: 2)] : 0
            output.append(alphabet[Int(b0 >> 2)])
            output.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            if remaining > 1 { output.append(alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)]) }
            if remaining > 2 { output.append(alphabet[Int(b2 & 0x3F)]) }
            index = self.index(index, offsetBy: Swift.min(3, remaining))
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes unpadded base64url text; `nil` when it is not base64url (another character,
    /// padding, or a length no encoding has).
    public init?(base64URLEncoded text: String) {
        var utf8 = Array(text.utf8)
        guard utf8.count % 4 != 1 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for index in utf8.indices {
            let value = Base64URL.values[Int(utf8[index])]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // The unused low bits of the last character must be zero (canonical encoding, as Foundation requires).
        if bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        utf8.removeAll()
        self.init(bytes)
    }
}

enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Each byte's value in the alphabet, or 0xFF.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
