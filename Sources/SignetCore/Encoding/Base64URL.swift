// Base64url without padding (RFC 4648 §5), as JOSE, PKCE and UAF use it.
// Written by hand over bytes: Foundation's base64 wants padding and the standard alphabet,
// and converting through it (string replacements, Character tests) cost more than the work.
import Foundation

extension Data {
    /// The unpadded base64url text of these bytes (RFC 4648 §5).
    public func base64URLEncodedString() -> String {
        withUnsafeBytes { Base64URL.encode($0) }
    }

    /// Decodes unpadded base64url text; `nil` when it is not base64url (another character,
    /// padding, or a length no encoding has).
    public init?(base64URLEncoded text: String) {
        var text = text
        guard let bytes = text.withUTF8({ Base64URL.decode($0) }) else { return nil }
        self.init(bytes)
    }
}

extension Array where Element == UInt8 {
    /// The unpadded base64url text of these bytes (RFC 4648 §5).
    public func base64URLEncodedString() -> String {
        withUnsafeBytes { Base64URL.encode($0) }
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

    /// Four characters for each three bytes, and two or three for a last one or two.
    static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let length = bytes.count / 3 * 4 + [0, 2, 3][bytes.count % 3]
        return alphabet.withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: length) { output in
                var input = 0
                var written = 0
                func put(_ group: UInt32, _ characters: Int) {
                    for shift in stride(from: 18, to: 18 - 6 * characters, by: -6) {
                        output[written] = alphabet[Int(group >> UInt32(shift) & 0x3F)]
                        written += 1
                    }
                }
                while bytes.count - input >= 3 {
                    put(UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8 | UInt32(bytes[input + 2]), 4)
                    input += 3
                }
                switch bytes.count - input {
                case 2: put(UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8, 3)
                case 1: put(UInt32(bytes[input]) << 16, 2)
                default: break
                }
                return written
            }
        }
    }

    /// The bytes of base64url `text`, or `nil` when it is not canonical unpadded base64url.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        return values.withUnsafeBufferPointer { values in
            var bytes = [UInt8]()
            bytes.reserveCapacity(text.count * 3 / 4)
            var accumulator: UInt32 = 0
            var bits = 0
            for character in text {
                let value = values[Int(character)]
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
            return bytes
        }
    }
}
