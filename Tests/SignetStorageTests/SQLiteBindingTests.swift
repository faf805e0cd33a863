import Foundation
@testable import SignetStorage
import Testing

/// How a bound parameter reaches SQLite (Sources/SignetStorage/SQLite/SQLiteValue.swift): the
/// store's own types by their exact type, everything else as before, through casts.
@Suite("SQLite: binds by type")
struct SQLiteBindingTests {
    private struct Shape: Encodable { let name: String }

    private func bound(_ bind: any Encodable) throws -> SQLiteValue { try SQLiteBinding.value(of: bind) }

    @Test("text, integers and their optionals are bound as themselves; nil as NULL")
    func ownTypes() throws {
        #expect(try bound("ab\u{0}c é") == .text("ab\u{0}c é"))
        #expect(try bound(Int64.min) == .integer(Int64.min))
        #expect(try bound(Int64.max) == .integer(Int64.max))
        #expect(try bound(-7) == .integer(-7))
        #expect(try bound(String?.some("x")) == .text("x"))
        #expect(try bound(String?.none) == .null)
        #expect(try bound(Int64?.some(42)) == .integer(42))
        #expect(try bound(Int64?.none) == .null)
    }

    @Test("other types go through the casts: smaller integers, flags, reals, bytes, nested optionals, JSON for the rest")
    func otherTypes() throws {
        #expect(try bound(Int32(-3)) == .integer(-3))
        #expect(try bound(Int?.some(5)) == .integer(5))
        #expect(try bound(Int?.none) == .null)
        #expect(try bound(true) == .integer(1))
        #expect(try bound(false) == .integer(0))
        #expect(try bound(1.5) == .real(1.5))
        #expect(try bound([UInt8]([0, 255])) == .blob([0, 255]))
        #expect(try bound(Data([1, 2])) == .blob([1, 2]))
        #expect(try bound(String??.some(.some("deep"))) == .text("deep"))
        #expect(try bound(String??.some(.none)) == .null)
        #expect(try bound(Shape(name: "n")) == .text(#"{"name":"n"}"#))
    }
}
