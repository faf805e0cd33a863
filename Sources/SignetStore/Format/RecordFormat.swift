// Each stored record's JSON described once: a format version and a member table that drives
// the fast writer and reader and the Codable conformance alike.
import Foundation
import SignetCore

/// A record the store keeps as JSON, described by one table (``format``).
///
/// The table names each member, the property it holds and whether it must be present; from it
/// come the record's `Codable` conformance (the store's JSON, dates as milliseconds since 1970),
/// its member-by-member writer (``SignetCore/JSONObjectWritable``) and reader
/// (``SignetCore/JSONObjectReadable``), so no member can be written one way and read another.
/// Every text is written with its format version (`"format"`); a text without one is version 1,
/// and a text of a later version than this build's is refused rather than half read. A part of a
/// record (the login session's request, its SMS challenge) has a table of version 0: it is written
/// inside its record, whose version covers it, and has no `"format"` member of its own.
public protocol StoredRecord: StoredValue, JSONObjectWritable, JSONObjectReadable {
    /// The record's JSON: its version and members.
    static var format: RecordFormat<Self> { get }
}

/// The format version and member table of one kind of ``StoredRecord``.
public struct RecordFormat<Record: Sendable>: Sendable {
    /// The version this build writes and the latest it reads.
    public let version: Int
    /// What decoding starts from: a member the text leaves out keeps this value (its default).
    let blank: Record
    /// The members, sorted by name, as they are written.
    let members: [RecordMember<Record>]

    /// - Parameters:
    ///   - version: raise it when a member changes meaning; texts of later versions are refused.
    ///   - blank: a record whose optional members hold their defaults for texts that leave them out.
    ///   - members: every stored member, each once.
    public init(version: Int, blank: Record, _ members: [RecordMember<Record>]) {
        self.version = version
        self.blank = blank
        self.members = members.sorted { $0.key < $1.key }
    }

    /// The name of the format version member.
    static var versionKey: String { "format" }

    /// Whether texts carry the version (a record), or not (a part of one, version 0).
    var isVersioned: Bool { version > 0 }
}

/// One member of a ``RecordFormat``: its JSON name, the record's property, and how it is read
/// and written both with and without `Codable`.
public struct RecordMember<Record>: Sendable {
    let name: StaticString
    let key: String
    let write: @Sendable (Record, inout JSONObjectWriter) -> Void
    let read: @Sendable (JSONObjectMembers, inout Record) throws(JSONObjectMembers.Unplain) -> Void
    let encode: @Sendable (Record, inout KeyedEncodingContainer<RecordKey>) throws -> Void
    let decode: @Sendable (KeyedDecodingContainer<RecordKey>, inout Record) throws -> Void

    /// A member of a plain type; when `required` is false, a text without it keeps the blank's value.
    public static func member<Value: StoredValue>(
        _ name: StaticString, _ path: any WritableKeyPath<Record, Value> & Sendable, required: Bool = true
    ) -> RecordMember {
        let key = name.description
        return RecordMember(
            name: name, key: key,
            write: { record, object in Value.write(record[keyPath: path], name, into: &object) },
            read: { members, record throws(JSONObjectMembers.Unplain) in
                guard members.contains(key) else {
                    if required { throw JSONObjectMembers.Unplain(member: key) }
                    return
                }
                record[keyPath: path] = try Value.read(key, from: members)
            },
            encode: keyedEncode(key, path), decode: keyedDecode(key, path, required: required))
    }

    /// An optional member of a plain type: absent (or `null`) is `nil`, and `nil` is not written.
    public static func member<Value: StoredValue>(_ name: StaticString, _ path: any WritableKeyPath<Record, Value?> & Sendable) -> RecordMember {
        let key = name.description
        return RecordMember(
            name: name, key: key,
            write: { record, object in
                if let value = record[keyPath: path] { Value.write(value, name, into: &object) }
            },
            read: { members, record throws(JSONObjectMembers.Unplain) in
                record[keyPath: path] = members.contains(key) ? try Value.read(key, from: members) : nil
            },
            encode: { record, container in try container.encodeIfPresent(record[keyPath: path], forKey: RecordKey(key)) },
            decode: { container, record in record[keyPath: path] = try container.decodeIfPresent(Value.self, forKey: RecordKey(key)) })
    }

    /// A member of any other `Codable` type (a nested value, a list of cases, a number with a
    /// fraction): written and read by `JSONEncoder` and `JSONDecoder` with the store's settings.
    public static func codable<Value: Codable & Sendable>(
        _ name: StaticString, _ path: any WritableKeyPath<Record, Value> & Sendable, required: Bool = true
    ) -> RecordMember {
        let key = name.description
        return RecordMember(
            name: name, key: key,
            write: { record, object in
                // A Codable value of the store's own types always encodes; nothing to write otherwise.
                if let json = try? StoredJSON.encoder.encode(record[keyPath: path]) { object.member(name, json: Array(json)) }
            },
            read: { members, record throws(JSONObjectMembers.Unplain) in
                guard let json = members.json(key) else {
                    if required { throw JSONObjectMembers.Unplain(member: key) }
                    return
                }
                guard let value = try? StoredJSON.decoder.decode(Value.self, from: Data(json)) else { throw JSONObjectMembers.Unplain(member: key) }
                record[keyPath: path] = value
            },
            encode: keyedEncode(key, path), decode: keyedDecode(key, path, required: required))
    }

    /// An optional member of any other `Codable` type.
    public static func codable<Value: Codable & Sendable>(_ name: StaticString, _ path: any WritableKeyPath<Record, Value?> & Sendable)
        -> RecordMember
    {
        let key = name.description
        return RecordMember(
            name: name, key: key,
            write: { record, object in
                if let value = record[keyPath: path], let json = try? StoredJSON.encoder.encode(value) { object.member(name, json: Array(json)) }
            },
            read: { members, record throws(JSONObjectMembers.Unplain) in
                guard let json = members.json(key) else {
                    record[keyPath: path] = nil
                    return
                }
                guard let value = try? StoredJSON.decoder.decode(Value.self, from: Data(json)) else { throw JSONObjectMembers.Unplain(member: key) }
                record[keyPath: path] = value
            },
            encode: { record, container in try container.encodeIfPresent(record[keyPath: path], forKey: RecordKey(key)) },
            decode: { container, record in record[keyPath: path] = try container.decodeIfPresent(Value.self, forKey: RecordKey(key)) })
    }
}

extension RecordMember {
    /// The `Codable` write of a member that is always written.
    fileprivate static func keyedEncode<Value: Codable & Sendable>(
        _ key: String, _ path: any KeyPath<Record, Value> & Sendable
    ) -> @Sendable (Record, inout KeyedEncodingContainer<RecordKey>) throws -> Void {
        { record, container in try container.encode(record[keyPath: path], forKey: RecordKey(key)) }
    }

    /// The `Codable` read of a member that is required, or keeps the blank's value when absent.
    fileprivate static func keyedDecode<Value: Codable & Sendable>(
        _ key: String, _ path: any WritableKeyPath<Record, Value> & Sendable, required: Bool
    ) -> @Sendable (KeyedDecodingContainer<RecordKey>, inout Record) throws -> Void {
        { container, record in
            if required {
                record[keyPath: path] = try container.decode(Value.self, forKey: RecordKey(key))
            } else if let value = try container.decodeIfPresent(Value.self, forKey: RecordKey(key)) {
                record[keyPath: path] = value
            }
        }
    }
}

/// A member name of a stored record, as a coding key.
public struct RecordKey: CodingKey, Sendable {
    public let stringValue: String
    public var intValue: Int? { nil }
    public init(_ name: String) { stringValue = name }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

/// The store's JSON settings: dates as milliseconds since 1970, members sorted, `/` as itself
/// (as ``SignetCore/JSONObjectWriter`` writes it, so both writers give the same bytes).
public enum StoredJSON {
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()
}

/// Why a stored text cannot be read by this build.
public struct StoredFormatTooNew: Error, Sendable, CustomStringConvertible {
    public let version: Int
    public let supported: Int
    public var description: String { "the record was written in format \(version) by a newer Signet; this build reads up to \(supported)" }
}

extension StoredRecord {
    /// A part of another record, as a member of it.
    public static func write(_ value: Self, _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, value) }

    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> Self {
        try Self(members: members.object(name))
    }

    public func writeJSON(into object: inout JSONObjectWriter) {
        var wroteVersion = !Self.format.isVersioned
        for member in Self.format.members {
            // "format" sorts among the members: written in its place, as a sorted encoder would.
            if !wroteVersion, member.key > RecordFormat<Self>.versionKey {
                object.member("format", Self.format.version)
                wroteVersion = true
            }
            member.write(self, &object)
        }
        if !wroteVersion { object.member("format", Self.format.version) }
    }

    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        let version = Self.format.isVersioned ? try members.intIfPresent(RecordFormat<Self>.versionKey) ?? 1 : 0
        // A later format is refused by the Codable path, which says why.
        guard version <= Self.format.version else { throw JSONObjectMembers.Unplain(member: RecordFormat<Self>.versionKey) }
        var record = Self.format.blank
        for member in Self.format.members { try member.read(members, &record) }
        self = record
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: RecordKey.self)
        if Self.format.isVersioned { try container.encode(Self.format.version, forKey: RecordKey(RecordFormat<Self>.versionKey)) }
        for member in Self.format.members { try member.encode(self, &container) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: RecordKey.self)
        let version = Self.format.isVersioned ? try container.decodeIfPresent(Int.self, forKey: RecordKey(RecordFormat<Self>.versionKey)) ?? 1 : 0
        guard version <= Self.format.version else { throw StoredFormatTooNew(version: version, supported: Self.format.version) }
        var record = Self.format.blank
        for member in Self.format.members { try member.decode(container, &record) }
        self = record
    }
}

/// A value a ``RecordMember`` reads and writes without `Codable`: strings, integers, Booleans,
/// lists of strings, dates (milliseconds since 1970) and string enumerations.
public protocol StoredValue: Codable, Sendable {
    /// Writes `value` as the member `name`.
    static func write(_ value: Self, _ name: StaticString, into object: inout JSONObjectWriter)
    /// Reads the member `name`, which is present and not `null`.
    static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> Self
}

extension String: StoredValue {
    public static func write(_ value: String, _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, value) }
    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> String { try members.string(name) }
}

extension Int: StoredValue {
    public static func write(_ value: Int, _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, value) }
    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> Int { try members.int(name) }
}

extension Bool: StoredValue {
    public static func write(_ value: Bool, _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, value) }
    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> Bool { try members.bool(name) }
}

extension Array: StoredValue where Element == String {
    public static func write(_ value: [String], _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, value) }
    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> [String] {
        try members.strings(name)
    }
}

extension Date: StoredValue {
    public static func write(_ value: Date, _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, millisecondsOf: value) }
    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> Date {
        try members.date(millisecondsIn: name)
    }
}

extension StoredValue where Self: RawRepresentable<String> {
    public static func write(_ value: Self, _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, value.rawValue) }
    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> Self {
        try members.rawValue(name, as: Self.self)
    }
}

extension UInt16: StoredValue {
    public static func write(_ value: UInt16, _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, Int(value)) }
    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> UInt16 {
        guard let value = UInt16(exactly: try members.int(name)) else { throw JSONObjectMembers.Unplain(member: name) }
        return value
    }
}

extension UInt32: StoredValue {
    public static func write(_ value: UInt32, _ name: StaticString, into object: inout JSONObjectWriter) { object.member(name, Int(value)) }
    public static func read(_ name: String, from members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) -> UInt32 {
        guard let value = UInt32(exactly: try members.int(name)) else { throw JSONObjectMembers.Unplain(member: name) }
        return value
    }
}
