// A JSON object written member by member, for the few types on the token endpoint's hot path.
import Foundation

/// A type that writes itself as one JSON object, without `Codable`.
///
/// For the values a token request encodes every time: the two sets of claims, the token
/// response and the two records it stores. Foundation's `JSONEncoder` goes through `Codable`'s
/// generic containers, and a callgrind count put those five encodings at about a tenth of a token
/// request's instructions (docs/performance.md); written member by member they cost a fraction.
/// Written by hand because no library on this machine encodes JSON without `Codable`.
///
/// A stored record gets its conformance from its member table (SignetStore's `StoredRecord`),
/// which also makes its `Codable` conformance, so the two cannot differ. The claims and the token
/// response keep `Codable` as the definition of their JSON: tests decode what
/// ``writeJSON(into:)`` writes with `JSONDecoder` and compare it with the value, every member set.
public protocol JSONObjectWritable: Encodable {
    /// Writes the value's members, each with ``JSONObjectWriter``'s member methods.
    func writeJSON(into object: inout JSONObjectWriter)
}

extension JSONObjectWritable {
    /// The value as the UTF-8 text of one JSON object.
    public func jsonBytes() -> [UInt8] {
        var object = JSONObjectWriter()
        writeJSON(into: &object)
        return object.finished()
    }
}

/// The text of one JSON object (RFC 8259), built member by member.
///
/// Member names are the caller's constants and are written as given, so they must need no
/// escaping; values are escaped. A `nil` optional writes no member, as `encodeIfPresent` does.
public struct JSONObjectWriter: Sendable {
    private var bytes: [UInt8]
    private var empty = true

    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The object's text, closed.
    public consuming func finished() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    public mutating func member(_ name: StaticString, _ value: String) {
        open(name)
        appendString(value)
    }

    public mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        member(name, value)
    }

    public mutating func member(_ name: StaticString, _ value: Int) {
        open(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func member(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        member(name, value)
    }

    public mutating func member(_ name: StaticString, _ value: Bool) {
        open(name)
        bytes.append(contentsOf: value ? Self.trueText : Self.falseText)
    }

    public mutating func member(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        member(name, value)
    }

    private static let trueText = Array("true".utf8)
    private static let falseText = Array("false".utf8)

    public mutating func member(_ name: StaticString, _ value: [String]) {
        open(name)
        bytes.append(UInt8(ascii: "["))
        for (index, element) in value.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    public mutating func member(_ name: StaticString, _ value: [String]?) {
        guard let value else { return }
        member(name, value)
    }

    /// A date as milliseconds since 1970, as `JSONEncoder`'s `.millisecondsSince1970` writes it
    /// (a number that reads back as the same `Double`).
    public mutating func member(_ name: StaticString, millisecondsOf date: Date) {
        open(name)
        bytes.append(contentsOf: JSONNumberText.of(date.timeIntervalSince1970 * 1000).utf8)
    }

    public mutating func member(_ name: StaticString, millisecondsOf date: Date?) {
        guard let date else { return }
        member(name, millisecondsOf: date)
    }

    /// A nested object.
    public mutating func member(_ name: StaticString, _ value: some JSONObjectWritable) {
        open(name)
        var nested = JSONObjectWriter(capacity: 64)
        value.writeJSON(into: &nested)
        bytes.append(contentsOf: nested.finished())
    }

    public mutating func member(_ name: StaticString, _ value: (some JSONObjectWritable)?) {
        guard let value else { return }
        member(name, value)
    }

    /// A member whose value is `json`, the text of one JSON value written elsewhere (by
    /// `JSONEncoder`, for a value this writer has no method for).
    public mutating func member(_ name: StaticString, json: [UInt8]) {
        open(name)
        bytes.append(contentsOf: json)
    }

    private mutating func open(_ name: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// A JSON string: `"` and `\` escaped, control characters as short escapes or `\u00XX`
    /// (RFC 8259 §7); everything else as its UTF-8 bytes, copied in runs between escapes.
    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            // Plain bytes eight at a time, then byte by byte from the first word that may need a look.
            let plainEnd = JSONPlainBytes.plainPrefixEnd(in: UnsafeRawBufferPointer(utf8), from: 0)
            for index in plainEnd..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscape(of: byte)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscape(of byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            let hex = Self.hexDigits
            bytes.append(contentsOf: [
                UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)],
            ])
        }
    }
}

/// How a `Double` is written as a JSON number.
enum JSONNumberText {
    /// The shortest text that reads back as `value` (Swift's `description`), without a trailing
    /// `.0`, as `JSONEncoder` writes it. Never called with infinities or NaN, which JSON cannot
    /// hold (`JSONEncoder` throws): a date's milliseconds are always finite.
    static func of(_ value: Double) -> String {
        precondition(value.isFinite, "JSON has no infinities or NaN")
        let text = value.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}
