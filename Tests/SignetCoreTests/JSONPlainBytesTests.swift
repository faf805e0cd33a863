import Foundation
@testable import SignetCore
import Testing

/// The eight-bytes-at-a-time test under the JSON scanner and writer: it may never pass over a
/// byte that needs a look, and should pass over every word of plain bytes.
@Suite("JSON strings: plain bytes eight at a time")
struct JSONPlainBytesTests {
    static func isSpecial(_ byte: UInt8) -> Bool { byte < 0x20 || byte > 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }

    static func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    @Test("every byte value in every lane of a plain word: flagged exactly when it needs a look")
    func everyByteInEveryLane() {
        for lane in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[lane] = UInt8(value)
                #expect(JSONPlainBytes.mayHoldSpecialByte(Self.word(bytes)) == Self.isSpecial(UInt8(value)), "byte \(value) in lane \(lane)")
            }
        }
    }

    @Test("random words: never a special byte passed over, and words of plain bytes always passed over")
    func randomWords() {
        var generator = SystemRandomNumberGenerator()
        let pool: [UInt8] =
            Array(0x20...0x7E).filter { !Self.isSpecial($0) } + [0x00, 0x1F, 0x22, 0x5C, 0x7F, 0x80, 0xC3, 0xFF, 0x21, 0x5B, 0x5D, 0x23]
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in pool.randomElement(using: &generator)! }
            let special = bytes.contains(where: Self.isSpecial)
            #expect(JSONPlainBytes.mayHoldSpecialByte(Self.word(bytes)) == special, "\(bytes)")
        }
    }

    @Test(
        "the plain prefix ends at or before the first special byte, in whole words from the start, and the scanner and writer agree with JSONSerialization"
    )
    func prefixAndRoundTrip() throws {
        for length in 0..<40 {
            for position in 0..<max(length, 1) {
                for special in [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x01, 0xC3] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                    if length > 0 { bytes[position] = special }
                    let end = bytes.withUnsafeBytes { JSONPlainBytes.plainPrefixEnd(in: $0, from: 0) }
                    #expect(end % 8 == 0 && end <= length)
                    if length > 0 { #expect(end <= position) } else { #expect(end == 0) }
                }
            }
            // Plain text: every whole word is passed over.
            let plain = [UInt8](repeating: UInt8(ascii: "y"), count: length)
            #expect(plain.withUnsafeBytes { JSONPlainBytes.plainPrefixEnd(in: $0, from: 0) } == length / 8 * 8)
        }
        // Written and read back, strings with an escape at every offset come out whole.
        for offset in 0..<20 {
            let value = String(repeating: "a", count: offset) + "\"é\\\n\u{01}" + String(repeating: "b", count: 19 - offset)
            var writer = JSONObjectWriter()
            writer.member("v", value)
            writer.member("a_member_name_longer_than_two_words", String(repeating: "z", count: offset))
            let text = writer.finished()
            let decoded = try JSONSerialization.jsonObject(with: Data(text)) as? [String: String]
            #expect(decoded?["v"] == value)
            guard case .object(let members) = JSONObjectMembers.scan(text) else {
                Issue.record("not scanned: \(String(decoding: text, as: UTF8.self))")
                continue
            }
            #expect(members.names == ["v", "a_member_name_longer_than_two_words"])
            #expect(try members.string("v") == value)
        }
    }
}
