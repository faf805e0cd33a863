// One SQLite value in a result row, and the Swift types a column may be read as.
import Foundation

/// A value as SQLite stores it (its five storage classes).
enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A type a result column can be read as without a general `Decoder`. SQLiteKit reads columns
/// through one; the inline database reads the few types the store's columns hold directly, and
/// converts between storage classes the way SQLiteKit does (an integer read as text gives its digits).
protocol SQLiteColumnReadable {
    /// The value, or `nil` when it cannot be read as this type.
    init?(sqliteValue: SQLiteValue)
}

extension String: SQLiteColumnReadable {
    init?(sqliteValue: SQLiteValue) {
        switch sqliteValue {
        case .text(let text): self = text
        case .integer(let integer): self = String(integer)
        case .real(let real): self = String(real)
        case .null, .blob: return nil
        }
    }
}

extension Int64: SQLiteColumnReadable {
    init?(sqliteValue: SQLiteValue) {
        switch sqliteValue {
        case .integer(let integer): self = integer
        case .real(let real): self.init(exactly: real)
        case .text(let text): self.init(text)
        case .null, .blob: return nil
        }
    }
}

extension Int: SQLiteColumnReadable {
    init?(sqliteValue: SQLiteValue) {
        guard let integer = Int64(sqliteValue: sqliteValue) else { return nil }
        self.init(exactly: integer)
    }
}

extension Double: SQLiteColumnReadable {
    init?(sqliteValue: SQLiteValue) {
        switch sqliteValue {
        case .real(let real): self = real
        case .integer(let integer): self = Double(integer)
        case .text(let text): self.init(text)
        case .null, .blob: return nil
        }
    }
}

extension Bool: SQLiteColumnReadable {
    init?(sqliteValue: SQLiteValue) {
        switch Int64(sqliteValue: sqliteValue) {
        case 0: self = false
        case 1: self = true
        default: return nil
        }
    }
}

extension Data: SQLiteColumnReadable {
    init?(sqliteValue: SQLiteValue) {
        switch sqliteValue {
        case .blob(let bytes): self.init(bytes)
        case .text(let text): self.init(text.utf8)
        case .null, .integer, .real: return nil
        }
    }
}

extension Optional: SQLiteColumnReadable where Wrapped: SQLiteColumnReadable {
    init?(sqliteValue: SQLiteValue) {
        if case .null = sqliteValue {
            self = .none
            return
        }
        guard let wrapped = Wrapped(sqliteValue: sqliteValue) else { return nil }
        self = .some(wrapped)
    }
}

/// A bound parameter as SQLite takes it. Values of other `Encodable` types are bound as their
/// JSON text, as SQLiteKit does.
enum SQLiteBinding {
    /// How `value` is bound.
    static func value(of bind: any Encodable) throws -> SQLiteValue {
        try typedValue(of: bind)
    }

    /// The store's own binds (text, integers and their optionals) are told by their exact type,
    /// without a dynamic cast: a cast from `any Encodable` cost about 300 instructions a bind, and
    /// an optional went through every cast below before its own. Each `unsafeBitCast` is from a
    /// type to itself, right after the check that `T` is that type.
    private static func typedValue<T: Encodable>(of bind: T) throws -> SQLiteValue {
        if T.self == String.self { return .text(unsafeBitCast(bind, to: String.self)) }
        if T.self == Int64.self { return .integer(unsafeBitCast(bind, to: Int64.self)) }
        if T.self == String?.self { return unsafeBitCast(bind, to: String?.self).map(SQLiteValue.text) ?? .null }
        if T.self == Int64?.self { return unsafeBitCast(bind, to: Int64?.self).map(SQLiteValue.integer) ?? .null }
        if T.self == Int.self { return .integer(Int64(unsafeBitCast(bind, to: Int.self))) }
        return try castValue(of: bind)
    }

    private static func castValue(of bind: any Encodable) throws -> SQLiteValue {
        switch bind {
        case let text as String: return .text(text)
        case let integer as Int64: return .integer(integer)
        case let integer as Int: return .integer(Int64(integer))
        case let integer as Int32: return .integer(Int64(integer))
        case let flag as Bool: return .integer(flag ? 1 : 0)
        case let real as Double: return .real(real)
        case let bytes as [UInt8]: return .blob(bytes)
        case let data as Data: return .blob(Array(data))
        case let optional as any OptionalBinding:
            guard let wrapped = optional.wrappedBinding else { return .null }
            return try value(of: wrapped)
        default:
            return .text(String(decoding: try JSONEncoder().encode(bind), as: UTF8.self))
        }
    }
}

/// An optional bind, so `nil` is bound as SQL NULL.
private protocol OptionalBinding {
    var wrappedBinding: (any Encodable)? { get }
}

extension Optional: OptionalBinding where Wrapped: Encodable {
    fileprivate var wrappedBinding: (any Encodable)? { self }
}
