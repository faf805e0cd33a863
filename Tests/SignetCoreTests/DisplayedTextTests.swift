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

    @Test("identifiers are letters, marks, digits, punctuation, symbols and the plain space; nothing invisible, not even the joiners names keep")
    func identifiers() {
        // The joiners where PRECIS allows them: a ZWNJ between Arabic-script letters, either after a virama.
        for identifier in [
            "alice@example.com", "bob.smith+tag@example.com", "ørsted", "日本", "مهسا", "Ada Lovelace", "x-1_2", "o'brien",
            "مه\u{200C}سا", "\u{092A}\u{094D}\u{200D}\u{0937}",
        ] {
            #expect(DisplayedText.isIdentifier(identifier), "\(identifier)")
        }
        let invisible: [String] = [
            "ali\u{200B}ce", "alice\u{2060}", "\u{FEFF}alice", "alice\u{E0041}", "ali\u{00AD}ce", "a\u{202E}b", "al\u{200D}ice", "al\u{200C}ice",
            "alice\u{3164}", "ali\u{1160}ce", "al\u{034F}ice", "alice\u{FE0F}", "ali\u{2800}ce", "alice\u{F0000}", "alice\u{0378}", "alice\u{00A0}",
            "a\tb", "ali\u{180B}ce", "ali\u{17B4}ce", "ali\u{17B5}ce", "ali\u{1D159}ce", "ali\u{16FE4}ce", "alice ", " alice", "\u{200C}alice",
            "alice\u{200C}",
        ]
        for identifier in invisible {
            #expect(!DisplayedText.isIdentifier(identifier), "\(identifier.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}
