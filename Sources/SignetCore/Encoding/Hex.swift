// Lowercase hexadecimal text of bytes: digests, fingerprints, MACs.

extension Sequence where Element == UInt8 {
    /// The lowercase hexadecimal text of these bytes, two digits a byte, no separators.
    ///
    /// The one hex encoder in Signet; digests stored or compared as text use it.
    public func hexEncodedString() -> String {
        let bytes = Array(self)
        return HexDigits.lowercase.withUnsafeBufferPointer { digits in
            String(unsafeUninitializedCapacity: bytes.count * 2) { text in
                for (index, byte) in bytes.enumerated() {
                    text[2 * index] = digits[Int(byte >> 4)]
                    text[2 * index + 1] = digits[Int(byte & 0x0F)]
                }
                return bytes.count * 2
            }
        }
    }
}

enum HexDigits {
    static let lowercase = Array("0123456789abcdef".utf8)
}
