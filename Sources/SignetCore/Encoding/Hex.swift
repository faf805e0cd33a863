// Lowercase hexadecimal text of bytes: digests, fingerprints, MACs.

extension Sequence where Element == UInt8 {
    /// The lowercase hexadecimal text of these bytes, two digits a byte, no separators.
    ///
    /// The one hex encoder in Signet; digests stored or compared as text use it.
    public func hexEncodedString() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
