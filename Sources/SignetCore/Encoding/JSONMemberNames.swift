// The member names of a JSON object, read by a strict scan (RFC 8259 §4).
//
// Written by hand because no JSON parser available here refuses a repeated name:
// Foundation's JSONDecoder and JSONSerialization silently keep one of the two, and
// jwt-kit decodes through JSONDecoder. RFC 8259 §4 leaves the outcome to the parser;
// RFC 7515 §5.2, RFC 7519 §4 and RFC 8725 §3.2 ask a JOSE recipient to refuse it,
// because two parsers that keep different copies see two different tokens.

/// The names at the top level of a JSON object, or why they cannot be trusted.
///
/// Only the top level is scanned for repeats; nested values are skipped (their brackets and
/// strings are still matched, so the end of each value is found exactly). Names are compared
/// after escapes are decoded (`"a\u006cg"` is `alg`) and with Swift's `String` equality, which
/// is the equality `JSONDecoder` looks keys up with, so canonically equivalent names count as
/// the same name too.
public enum JSONMemberNames: Sendable, Equatable {
    /// A JSON object whose top-level names are all different, in order.
    case unique([String])
    /// A JSON object that names `name` more than once.
    case repeated(String)
    /// Not a single JSON object in UTF-8 (a top-level array or scalar, bad escapes, trailing bytes).
    case malformed

    /// Scans `json`, the UTF-8 text of what should be one JSON object.
    public init(scanning json: some Collection<UInt8>) {
        switch JSONObjectMembers.scan(json) {
        case .object(let members): self = .unique(members.names)
        case .repeated(let name): self = .repeated(name)
        case .malformed: self = .malformed
        }
    }

    /// Nested arrays and objects deeper than this are refused rather than followed.
    static let maximumDepth = 64

    /// The strict scan, shared with ``JSONObjectMembers``, which reads values at the ranges it finds.
    struct Scanner {
        let bytes: [UInt8]
        var index = 0

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            // RFC 8259 §2: space, horizontal tab, line feed, carriage return.
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// The top-level members' names and where each value's text is, in order.
        mutating func topLevelObject() -> JSONObjectMembers.Scan {
            skipWhitespace()
            guard consume(UInt8(ascii: "{")) else { return .malformed }
            var members: [JSONObjectMembers.Member] = []
            var seen = RepeatedNames()
            skipWhitespace()
            if !consume(UInt8(ascii: "}")) {
                while true {
                    skipWhitespace()
                    guard let name = string() else { return .malformed }
                    guard seen.insert(name, after: members) else { return .repeated(name) }
                    skipWhitespace()
                    guard consume(UInt8(ascii: ":")) else { return .malformed }
                    skipWhitespace()
                    let start = index
                    guard skipValue() else { return .malformed }
                    members.append(JSONObjectMembers.Member(name: name, value: start..<index))
                    skipWhitespace()
                    if consume(UInt8(ascii: ",")) { continue }
                    guard consume(UInt8(ascii: "}")) else { return .malformed }
                    break
                }
            }
            skipWhitespace()
            return index == bytes.count ? .object(JSONObjectMembers(bytes: bytes, members: members)) : .malformed
        }

        /// The names met so far, for spotting a repeat: compared one by one while there are few
        /// (a record or a token has about a dozen, and `==` on short names costs less than hashing
        /// them), in a set beyond that. Both use `String` equality, so both see the same repeats.
        struct RepeatedNames {
            private static let linearLimit = 16
            private var names: Set<String>?

            /// Adds `name` to the names of `members` (those before it); `false` if it is one of them.
            mutating func insert(_ name: String, after members: [JSONObjectMembers.Member]) -> Bool {
                if names == nil {
                    guard members.count >= Self.linearLimit else { return !members.contains { $0.name == name } }
                    names = Set(members.map(\.name))
                }
                return names!.insert(name).inserted
            }
        }

        /// Reads a string starting at `"` and returns it with its escapes decoded — RFC 8259 §7.
        mutating func string() -> String? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = index
            switch plainRun() {
            case .ascii(let end): return String(decoding: bytes[start..<end], as: UTF8.self)
            case .utf8(let end): return String(validating: bytes[start..<end], as: UTF8.self)
            case .escaped: return escapedString(from: start)
            case .invalid: return nil
            }
        }

        /// Checks a string starting at `"` exactly as ``string()`` reads it, without making it.
        mutating func skipString() -> Bool {
            guard consume(UInt8(ascii: "\"")) else { return false }
            let start = index
            switch plainRun() {
            case .ascii: return true
            case .utf8(let end): return String(validating: bytes[start..<end], as: UTF8.self) != nil
            case .escaped: return escapedString(from: start) != nil
            case .invalid: return false
            }
        }

        /// How a string's text after its opening `"` ends.
        enum Run {
            /// At the closing `"` (now consumed), ASCII only: valid UTF-8 without checking.
            case ascii(end: Int)
            /// At the closing `"` (now consumed), with bytes above 0x7F still to be checked as UTF-8.
            case utf8(end: Int)
            /// At a `\`: to be read escape by escape.
            case escaped
            /// At a control character or the end of the text.
            case invalid
        }

        /// Scans a string's bytes up to its closing `"`, the fast way when it has no escapes:
        /// eight plain bytes at a time (``JSONPlainBytes``), then byte by byte.
        mutating func plainRun() -> Run {
            let start = index
            index = bytes.withUnsafeBytes { JSONPlainBytes.plainPrefixEnd(in: $0, from: start) }
            var asciiOnly = true
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return asciiOnly ? .ascii(end: index - 1) : .utf8(end: index - 1)
                case UInt8(ascii: "\\"): return .escaped
                case 0x00..<0x20: return .invalid  // control characters must be escaped
                case 0x80...: asciiOnly = false
                default: break
                }
                index += 1
            }
            return .invalid
        }

        /// Reads a string from `start`, just after its opening `"`, decoding its escapes.
        mutating func escapedString(from start: Int) -> String? {
            index = start
            var utf8: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: utf8, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        UTF8.encode(scalar) { utf8.append($0) }
                    default: return nil
                    }
                case 0x00..<0x20:
                    return nil  // control characters must be escaped
                default:
                    utf8.append(byte)
                }
            }
            return nil
        }

        /// The scalar of `XXXX` after `\u`, joining a surrogate pair; `nil` for a lone surrogate.
        mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let first = hexQuad() else { return nil }
            switch first {
            case 0xD800..<0xDC00:
                guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")), let second = hexQuad(), (0xDC00..<0xE000).contains(second) else {
                    return nil
                }
                return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            case 0xDC00..<0xE000:
                return nil
            default:
                return Unicode.Scalar(first)
            }
        }

        mutating func hexQuad() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                guard let digit = Self.hexValue(byte) else { return nil }
                value = value << 4 | digit
            }
            index += 4
            return value
        }

        static func hexValue(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }

        /// Skips one value of any kind, checking its whole grammar (RFC 8259 §2–§7): in nested
        /// objects and arrays too, every `:` and `,` where it belongs and no trailing `,`.
        /// The values are not kept, but a reader of ``JSONObjectMembers`` answers without
        /// `JSONDecoder`, so nothing else checks that the text is JSON.
        mutating func skipValue(depth: Int = 0) -> Bool {
            skipWhitespace()
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "\""):
                return skipString()
            case UInt8(ascii: "{"):
                guard depth < JSONMemberNames.maximumDepth else { return false }
                index += 1
                skipWhitespace()
                if consume(UInt8(ascii: "}")) { return true }
                while true {
                    skipWhitespace()
                    guard skipString() else { return false }
                    skipWhitespace()
                    guard consume(UInt8(ascii: ":")), skipValue(depth: depth + 1) else { return false }
                    skipWhitespace()
                    if consume(UInt8(ascii: ",")) { continue }
                    return consume(UInt8(ascii: "}"))
                }
            case UInt8(ascii: "["):
                guard depth < JSONMemberNames.maximumDepth else { return false }
                index += 1
                skipWhitespace()
                if consume(UInt8(ascii: "]")) { return true }
                while true {
                    guard skipValue(depth: depth + 1) else { return false }
                    skipWhitespace()
                    if consume(UInt8(ascii: ",")) { continue }
                    return consume(UInt8(ascii: "]"))
                }
            default:
                return literal()
            }
        }

        /// Skips `true`, `false`, `null` or a number (RFC 8259 §3, §6).
        mutating func literal() -> Bool {
            let start = index
            while let byte = current, !Self.isDelimiter(byte) { index += 1 }
            let token = bytes[start..<index]
            if token.elementsEqual("true".utf8) || token.elementsEqual("false".utf8) || token.elementsEqual("null".utf8) { return true }
            return Self.isNumber(token)
        }

        /// Whitespace and the bytes that may end a literal. A switch, not a `Set`: hashing each
        /// byte of every number was most of the scan.
        static func isDelimiter(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "\""): true
            default: false
            }
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        static func isNumber(_ token: ArraySlice<UInt8>) -> Bool {
            var rest = token[...]
            func digits() -> Int {
                let count = rest.prefix(while: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }).count
                rest = rest.dropFirst(count)
                return count
            }
            if rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
            if rest.first == UInt8(ascii: "0") { rest = rest.dropFirst() } else if digits() == 0 { return false }
            if rest.first == UInt8(ascii: ".") {
                rest = rest.dropFirst()
                guard digits() > 0 else { return false }
            }
            if rest.first == UInt8(ascii: "e") || rest.first == UInt8(ascii: "E") {
                rest = rest.dropFirst()
                if rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
                guard digits() > 0 else { return false }
            }
            return rest.isEmpty
        }
    }
}
