// Names and identifiers people give: nothing that makes a listing show other than what is stored.
import SignetCore
import Testing

@Suite("Displayed text")
struct DisplayedTextTests {
    @Test("names keep letters of every script, emoji and the joiners they need; they lose control, line-separating and direction characters")
    func names() {
        for name in ["Ada Lovelace", "مه\u{200C}سا", "👩\u{200D}💻 Ada", "Jean\u{00AD}Pierre", "Zoë", "日本語"] {
            #expect(DisplayedText.isName(name), "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        for name in ["a\u{0}b", "a\nb", "a\u{1B}[31m", "a\u{2028}b", "a\u{2029}b", "\u{202E}gnp.exe", "a\u{2066}b", "a\u{200F}b", "a\u{061C}b"] {
            #expect(!DisplayedText.isName(name), "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    @Test("identifiers are names without invisible format characters, but for the two joiners")
    func identifiers() {
        #expect(DisplayedText.isIdentifier("alice@example.com"))
        #expect(DisplayedText.isIdentifier("مه\u{200C}سا"))
        for identifier in ["ali\u{200B}ce", "alice\u{2060}", "\u{FEFF}alice", "alice\u{E0041}", "ali\u{00AD}ce", "a\u{202E}b"] {
            #expect(!DisplayedText.isIdentifier(identifier), "\(identifier.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}
