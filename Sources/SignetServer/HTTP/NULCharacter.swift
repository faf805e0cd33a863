// U+0000 in a request: refused at the edge, since PostgreSQL text cannot hold it.
import Foundation

/// Finds U+0000 in request text before it is decoded, by bytes (a scan costs less than the
/// decoding it precedes).
enum NULCharacter {
    /// The refusal's description.
    static let refusal = "a parameter holds the NUL character (U+0000)"

    /// Whether percent-encoded or raw text (a query, a form body, a path) holds U+0000: `%00` or a zero byte.
    static func isEncoded(inForm text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for index in bytes.indices {
                if bytes[index] == 0 { return true }
                if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "0"),
                    bytes[index + 2] == UInt8(ascii: "0")
                {
                    return true
                }
            }
            return false
        }
    }

    /// Whether a JSON text holds U+0000: a zero byte, or the escape `\u0000` (not `\\u0000`,
    /// which is a backslash and text).
    static func isEncoded(inJSON data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0 { return true }
                if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    if bytes[index + 1] == UInt8(ascii: "u"), index + 5 < bytes.count,
                        (2...5).allSatisfy({ bytes[index + $0] == UInt8(ascii: "0") })
                    {
                        return true
                    }
                    index += 2
                    continue
                }
                index += 1
            }
            return false
        }
    }
}
