// The members of a JSON object, read by the strict scan of JSONMemberNames without `Codable`.
import Foundation

/// One JSON object's top-level members, each value read on request as a plain string, integer,
/// Boolean, array of strings, date or nested object.
///
/// For the JSON a token request reads every time: the client assertion's header and claims, and
/// the code, grant and refresh token records; and the login session a login reads at every step.
/// Foundation's `JSONDecoder` goes through `Codable`'s
/// generic containers, and a callgrind count put those decodings at about a tenth of a token
/// request's instructions (docs/performance.md). Written by hand because no library here reads
/// JSON without `Codable`; the scan is ``JSONMemberNames``' own, so it is exactly as strict.
///
/// A read answers only in the plain cases, where its answer is certainly the one `JSONDecoder`
/// gives; anything else (a missing required member, a number with a fraction where an integer is
/// wanted, a value of another type) throws ``Unplain``, and the caller decodes with `JSONDecoder`
/// instead (``JSONObjectReadable/decode(_:fallback:)``), so results and errors stay
/// `JSONDecoder`'s in every case.
public struct JSONObjectMembers: Sendable, Equatable {
    /// A member's name and where its value's text is.
    struct Member: Sendable, Equatable {
        let name: String
        let value: Range<Int>
    }

    /// What a scan found.
    public enum Scan: Sendable, Equatable {
        /// A JSON object whose top-level names are all different.
        case object(JSONObjectMembers)
        /// A JSON object that names `name` more than once (RFC 8259 §4 leaves it open; JOSE refuses it).
        case repeated(String)
        /// Not a single JSON object in UTF-8.
        case malformed
    }

    /// A value that is not of the plain shape asked for, or is missing: decode with `JSONDecoder`.
    public struct Unplain: Error, Sendable {
        public let member: String
        public init(member: String) { self.member = member }
    }

    let bytes: [UInt8]
    let members: [Member]

    /// Scans `json`, the UTF-8 text of what should be one JSON object (``JSONMemberNames``' rules).
    public static func scan(_ json: some Collection<UInt8>) -> Scan {
        var scanner = JSONMemberNames.Scanner(bytes: Array(json))
        return scanner.topLevelObject()
    }

    /// The top-level names, in order.
    public var names: [String] { members.map(\.name) }

    private func range(_ name: String) -> Range<Int>? {
        members.first { $0.name == name }?.value
    }

    private func isNull(_ range: Range<Int>) -> Bool {
        bytes[range].elementsEqual("null".utf8)
    }

    /// Whether the member is present and not `null`.
    public func contains(_ name: String) -> Bool {
        guard let range = range(name) else { return false }
        return !isNull(range)
    }

    /// The text of the member's value, for `JSONDecoder`; `nil` when absent or `null`.
    public func json(_ name: String) -> ArraySlice<UInt8>? {
        guard let range = range(name), !isNull(range) else { return nil }
        return bytes[range]
    }

    // MARK: Strings

    public func string(_ name: String) throws(Unplain) -> String {
        guard let value = try stringIfPresent(name) else { throw Unplain(member: name) }
        return value
    }

    /// The string, or `nil` when the member is absent or `null` (as `decodeIfPresent` reads it).
    public func stringIfPresent(_ name: String) throws(Unplain) -> String? {
        guard let range = range(name), !isNull(range) else { return nil }
        return try string(at: range, name: name)
    }

    private func string(at range: Range<Int>, name: String) throws(Unplain) -> String {
        guard bytes[range.lowerBound] == UInt8(ascii: "\"") else { throw Unplain(member: name) }
        var scanner = JSONMemberNames.Scanner(bytes: bytes, index: range.lowerBound)
        guard let value = scanner.string(), scanner.index == range.upperBound else { throw Unplain(member: name) }
        return value
    }

    // MARK: Integers

    public func int(_ name: String) throws(Unplain) -> Int {
        guard let value = try intIfPresent(name) else { throw Unplain(member: name) }
        return value
    }

    /// An integer written as one (`-?(0|[1-9][0-9]*)`, in `Int`'s range); a fraction or an exponent is not plain.
    public func intIfPresent(_ name: String) throws(Unplain) -> Int? {
        guard let range = range(name), !isNull(range) else { return nil }
        let text = bytes[range]
        let digits = text.first == UInt8(ascii: "-") ? text.dropFirst() : text
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            digits.count == 1 || digits.first != UInt8(ascii: "0"),
            let value = Int(String(decoding: text, as: UTF8.self))
        else { throw Unplain(member: name) }
        return value
    }

    // MARK: Enumerations

    /// The case of `E` named by the member's string; an unknown case is not plain (`JSONDecoder` then says why).
    public func rawValue<E: RawRepresentable<String>>(_ name: String, as type: E.Type) throws(Unplain) -> E {
        guard let value = try rawValueIfPresent(name, as: type) else { throw Unplain(member: name) }
        return value
    }

    public func rawValueIfPresent<E: RawRepresentable<String>>(_ name: String, as type: E.Type) throws(Unplain) -> E? {
        guard let raw = try stringIfPresent(name) else { return nil }
        guard let value = E(rawValue: raw) else { throw Unplain(member: name) }
        return value
    }

    // MARK: Booleans

    public func bool(_ name: String) throws(Unplain) -> Bool {
        guard let value = try boolIfPresent(name) else { throw Unplain(member: name) }
        return value
    }

    /// `true` or `false`; any other value is not plain.
    public func boolIfPresent(_ name: String) throws(Unplain) -> Bool? {
        guard let range = range(name), !isNull(range) else { return nil }
        if bytes[range].elementsEqual("true".utf8) { return true }
        if bytes[range].elementsEqual("false".utf8) { return false }
        throw Unplain(member: name)
    }

    // MARK: Nested objects

    public func object(_ name: String) throws(Unplain) -> JSONObjectMembers {
        guard let value = try objectIfPresent(name) else { throw Unplain(member: name) }
        return value
    }

    /// A nested object's members, or `nil` when the member is absent or `null`. One that repeats
    /// a name, or is not an object, is not plain.
    public func objectIfPresent(_ name: String) throws(Unplain) -> JSONObjectMembers? {
        guard let range = range(name), !isNull(range) else { return nil }
        guard bytes[range.lowerBound] == UInt8(ascii: "{"), case .object(let nested) = Self.scan(bytes[range]) else { throw Unplain(member: name) }
        return nested
    }

    // MARK: Arrays of strings

    public func strings(_ name: String) throws(Unplain) -> [String] {
        guard let value = try stringsIfPresent(name) else { throw Unplain(member: name) }
        return value
    }

    public func stringsIfPresent(_ name: String) throws(Unplain) -> [String]? {
        guard let range = range(name), !isNull(range) else { return nil }
        guard bytes[range.lowerBound] == UInt8(ascii: "[") else { throw Unplain(member: name) }
        var scanner = JSONMemberNames.Scanner(bytes: bytes, index: range.lowerBound + 1)
        var values: [String] = []
        scanner.skipWhitespace()
        if scanner.consume(UInt8(ascii: "]")) { return values }
        while true {
            scanner.skipWhitespace()
            guard let value = scanner.string() else { throw Unplain(member: name) }
            values.append(value)
            scanner.skipWhitespace()
            if scanner.consume(UInt8(ascii: ",")) { continue }
            guard scanner.consume(UInt8(ascii: "]")), scanner.index == range.upperBound else { throw Unplain(member: name) }
            return values
        }
    }

    // MARK: Dates

    /// A date written as milliseconds since 1970 (`JSONDecoder`'s `.millisecondsSince1970`).
    public func date(millisecondsIn name: String) throws(Unplain) -> Date {
        guard let value = try dateIfPresent(millisecondsIn: name) else { throw Unplain(member: name) }
        return value
    }

    public func dateIfPresent(millisecondsIn name: String) throws(Unplain) -> Date? {
        guard let range = range(name), !isNull(range) else { return nil }
        // The scan has checked the number's grammar; a string or any other value is not plain.
        guard JSONMemberNames.Scanner.isNumber(bytes[range]), let milliseconds = Double(String(decoding: bytes[range], as: UTF8.self)),
            milliseconds.isFinite
        else { throw Unplain(member: name) }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }
}

/// A type read from ``JSONObjectMembers`` when its JSON is plain, and by `JSONDecoder` otherwise.
///
/// A stored record gets its conformance from its member table (SignetStore's `StoredRecord`),
/// which also makes its `Decodable` conformance; the client assertion's parts keep `Decodable`
/// as the definition of their JSON, and tests read the same texts both ways and compare the values.
public protocol JSONObjectReadable: Decodable {
    /// Reads the value, throwing ``JSONObjectMembers/Unplain`` for anything not plain.
    init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain)
}

extension JSONObjectReadable {
    /// The value of `json`, read by hand when it is plain, else by `decoder` (whose result and
    /// errors are then the answer, exactly as without this protocol).
    public static func decode(_ json: some Collection<UInt8>, fallback decoder: @autoclosure () -> JSONDecoder) throws -> Self {
        if case .object(let members) = JSONObjectMembers.scan(json), let value = try? Self(members: members) { return value }
        return try decoder().decode(Self.self, from: Data(json))
    }

    /// The same, for an object already scanned.
    public static func decode(_ members: JSONObjectMembers, fallback decoder: @autoclosure () -> JSONDecoder) throws -> Self {
        if let value = try? Self(members: members) { return value }
        return try decoder().decode(Self.self, from: Data(members.bytes))
    }
}
