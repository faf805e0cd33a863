// HTML escaping of the values put into the hosted pages, by bytes.
import Mustache

/// The hosted pages' Mustache content type: every value is escaped with ``HTMLEscaping``.
/// ``PageRenderer`` registers it and opens every template with its pragma (a partial starts
/// again from swift-mustache's own `HTML` type, so each template names it).
///
/// Written by hand rather than using swift-mustache's `HTML` type, for two reasons. That one
/// compares whole `Character`s, so a quote or `<` followed by a combining mark (`"` and U+0301
/// are one `Character`, not equal to `"`) is left as it is, and a value such as a `login_hint`
/// could end the attribute it is written into. And it walks each value by `Character` with a
/// dictionary look-up per character, about a third of a page's rendering.
struct PageHTMLContentType: MustacheContentType {
    /// The name in `{{% CONTENT_TYPE: … }}`.
    static let name = "SIGNET_HTML"
    /// The pragma that selects this type, for the start of a template.
    static let pragma = "{{% CONTENT_TYPE: \(name) }}"

    func escapeText(_ text: String) -> String { HTMLEscaping.escape(text) }
}

/// Escapes the five characters HTML gives a meaning to in text and in quoted attribute values.
enum HTMLEscaping {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by their character references. By UTF-8
    /// bytes: none of the five can be part of a longer character's encoding, so each is found
    /// whatever follows it.
    static func escape(_ text: String) -> String {
        var text = text
        let extra = text.withUTF8 { bytes in bytes.reduce(0) { $0 + (reference(for: $1)?.utf8CodeUnitCount ?? 1) - 1 } }
        guard extra > 0 else { return text }
        return text.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: bytes.count + extra) { output in
                var written = 0
                for byte in bytes {
                    guard let reference = reference(for: byte) else {
                        output[written] = byte
                        written += 1
                        continue
                    }
                    reference.withUTF8Buffer { referenceBytes in
                        for referenceByte in referenceBytes {
                            output[written] = referenceByte
                            written += 1
                        }
                    }
                }
                return written
            }
        }
    }

    /// The character reference `byte` is replaced by, or `nil` when it stays.
    private static func reference(for byte: UInt8) -> StaticString? {
        switch byte {
        case UInt8(ascii: "&"): return "&amp;"
        case UInt8(ascii: "<"): return "&lt;"
        case UInt8(ascii: ">"): return "&gt;"
        case UInt8(ascii: "\""): return "&quot;"
        case UInt8(ascii: "'"): return "&#39;"
        default: return nil
        }
    }
}
