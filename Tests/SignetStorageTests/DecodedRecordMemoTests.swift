import Foundation
@testable import SignetStorage
import Testing

/// The memo of records decoded from stored JSON text (Sources/SignetStorage/DecodedRecordMemo.swift).
@Suite("Decoded records are remembered by their exact text")
struct DecodedRecordMemoTests {
    private struct Name: Decodable, Sendable, Equatable { let name: String }
    private struct Other: Decodable, Sendable, Equatable { let name: String }

    private final class Counter { var count = 0 }

    /// Decodes `text` through `memo`, counting the decodes in `decodes`.
    private func decode<T: Decodable & Sendable>(_ type: T.Type, _ text: String, _ memo: DecodedRecordMemo, _ decodes: Counter) throws -> T {
        try memo.record(T.self, from: text) { text in
            decodes.count += 1
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        }
    }

    @Test("the same text is decoded once; another text, or the same text as another type, is decoded afresh")
    func sameTextOnce() throws {
        let memo = DecodedRecordMemo(capacity: 4, maximumTextBytes: 1024)
        let decodes = Counter()
        #expect(try decode(Name.self, #"{"name":"a"}"#, memo, decodes) == Name(name: "a"))
        #expect(try decode(Name.self, #"{"name":"a"}"#, memo, decodes) == Name(name: "a"))
        #expect(decodes.count == 1)
        // An edited record is another text: never the old record.
        #expect(try decode(Name.self, #"{"name":"b"}"#, memo, decodes) == Name(name: "b"))
        #expect(try decode(Name.self, #"{"name": "a"}"#, memo, decodes) == Name(name: "a"))
        #expect(decodes.count == 3)
        #expect(try decode(Other.self, #"{"name":"a"}"#, memo, decodes) == Other(name: "a"))
        #expect(decodes.count == 4)
    }

    @Test("at most capacity texts are kept, the oldest forgotten first")
    func capacity() throws {
        let memo = DecodedRecordMemo(capacity: 2, maximumTextBytes: 1024)
        let decodes = Counter()
        for name in ["a", "b", "c"] { _ = try decode(Name.self, #"{"name":"\#(name)"}"#, memo, decodes) }
        #expect(decodes.count == 3)
        _ = try decode(Name.self, #"{"name":"c"}"#, memo, decodes)
        _ = try decode(Name.self, #"{"name":"b"}"#, memo, decodes)
        #expect(decodes.count == 3, "b and c are the two newest")
        _ = try decode(Name.self, #"{"name":"a"}"#, memo, decodes)
        #expect(decodes.count == 4, "a was forgotten")
    }

    @Test("texts are compared byte for byte: a canonically equivalent text is another text")
    func bytewise() throws {
        let memo = DecodedRecordMemo(capacity: 4, maximumTextBytes: 1024)
        let decodes = Counter()
        let composed = #"{"name":"Jos\#u{E9}"}"#
        let decomposed = #"{"name":"Jose\#u{301}"}"#
        #expect(composed == decomposed, "Swift's String equality is canonical equivalence")
        #expect(try decode(Name.self, composed, memo, decodes).name.unicodeScalars.count == 4)
        #expect(try decode(Name.self, decomposed, memo, decodes).name.unicodeScalars.count == 5)
        #expect(decodes.count == 2)
    }

    @Test("a text longer than the limit is decoded every time and not kept")
    func longTexts() throws {
        let memo = DecodedRecordMemo(capacity: 4, maximumTextBytes: 16)
        let decodes = Counter()
        let long = #"{"name":"a long name"}"#
        _ = try decode(Name.self, long, memo, decodes)
        _ = try decode(Name.self, long, memo, decodes)
        #expect(decodes.count == 2)
        let short = #"{"name":"a"}"#
        _ = try decode(Name.self, short, memo, decodes)
        _ = try decode(Name.self, short, memo, decodes)
        #expect(decodes.count == 3)
    }

    @Test("a text that does not decode throws every time and is not remembered")
    func failures() throws {
        let memo = DecodedRecordMemo(capacity: 2, maximumTextBytes: 1024)
        let decodes = Counter()
        #expect(throws: (any Error).self) { try decode(Name.self, #"{"nom":"a"}"#, memo, decodes) }
        #expect(throws: (any Error).self) { try decode(Name.self, #"{"nom":"a"}"#, memo, decodes) }
        #expect(decodes.count == 2)
    }
}
