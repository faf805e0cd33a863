// One result row of the inline SQLite database, read the way SQLKit asks.
import Foundation
import SQLKit

/// One result row of ``InlineSQLiteDatabase``.
struct InlineSQLiteRow: SQLRow {
    let columns: SQLiteColumns
    let values: [SQLiteValue]

    var allColumns: [String] { columns.names }

    func contains(column: String) -> Bool { columns.index(of: column) != nil }

    func decodeNil(column: String) throws -> Bool {
        try value(column) == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        let value = try value(column)
        if let fast = try fastRead(value, column, as: D.self) { return fast }
        guard let readable = D.self as? any SQLiteColumnReadable.Type else {
            // Anything else is JSON text, as SQLiteKit writes it.
            guard case .text(let text) = value else { throw mismatch(column, D.self) }
            return try JSONDecoder().decode(D.self, from: Data(text.utf8))
        }
        guard let read = readable.init(sqliteValue: value) as? D else { throw mismatch(column, D.self) }
        return read
    }

    /// The store's own columns are text and integers: `String`, `Int64` and their optionals are read
    /// here without a dynamic cast (two casts and an `Optional` metadata look-up per column
    /// otherwise); `nil` for any other type. Each `unsafeBitCast` is from a type to itself, right
    /// after the check that `D` is that type. Four branches written out: one generic helper for
    /// them measured 20,000 more instructions per token request (not specialized).
    private func fastRead<D>(_ value: SQLiteValue, _ column: String, as type: D.Type) throws -> D? {
        if D.self == String.self {
            guard let text = String(sqliteValue: value) else { throw mismatch(column, D.self) }
            return unsafeBitCast(text, to: D.self)
        }
        if D.self == String?.self {
            if value == .null { return unsafeBitCast(String?.none, to: D.self) }
            guard let text = String(sqliteValue: value) else { throw mismatch(column, D.self) }
            return unsafeBitCast(String?.some(text), to: D.self)
        }
        if D.self == Int64.self {
            guard let integer = Int64(sqliteValue: value) else { throw mismatch(column, D.self) }
            return unsafeBitCast(integer, to: D.self)
        }
        if D.self == Int64?.self {
            if value == .null { return unsafeBitCast(Int64?.none, to: D.self) }
            guard let integer = Int64(sqliteValue: value) else { throw mismatch(column, D.self) }
            return unsafeBitCast(Int64?.some(integer), to: D.self)
        }
        return nil
    }

    private func value(_ column: String) throws -> SQLiteValue {
        guard let index = columns.index(of: column) else {
            throw DecodingError.keyNotFound(ColumnKey(column), .init(codingPath: [], debugDescription: "no column \(column)"))
        }
        return values[index]
    }

    private func mismatch(_ column: String, _ type: Any.Type) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: [ColumnKey(column)], debugDescription: "column \(column) holds no \(type)"))
    }
}

private struct ColumnKey: CodingKey {
    let stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}
