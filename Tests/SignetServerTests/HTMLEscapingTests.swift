import Testing

@testable import SignetServer

/// The hosted pages' escaping (Sources/SignetServer/Pages/HTMLEscaping.swift).
@Suite("Pages: HTML escaping by bytes")
struct HTMLEscapingTests {
    @Test("the five characters become references; everything else, multi-byte text included, is kept as it is")
    func fiveCharacters() {
        #expect(HTMLEscaping.escape("") == "")
        #expect(HTMLEscaping.escape("plain text é 名前 😀") == "plain text é 名前 😀")
        let markup = "<a href=\"x\" title='y'>&amp;</a>"
        #expect(HTMLEscaping.escape(markup) == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;")
        #expect(HTMLEscaping.escape("&&") == "&amp;&amp;")
    }

    @Test("a character followed by a combining mark is escaped all the same (one Character to Swift, two to a browser)")
    func combiningMarks() {
        let quoteWithMark = "\"" + "\u{301}"
        #expect(HTMLEscaping.escape(quoteWithMark) == "&quot;\u{301}")
        #expect(HTMLEscaping.escape("<\u{338}script>") == "&lt;\u{338}script&gt;")
        #expect(HTMLEscaping.escape("'\u{20DD}&\u{301}") == "&#39;\u{20DD}&amp;\u{301}")
    }

    @Test("text of every length up to a few pages, with and without escapes, comes back whole")
    func lengths() {
        for length in [1, 15, 16, 17, 1000, 10_000] {
            let clean = String(repeating: "é", count: length)
            #expect(HTMLEscaping.escape(clean) == clean)
            let mixed = String(repeating: "a<", count: length)
            #expect(HTMLEscaping.escape(mixed) == String(repeating: "a&lt;", count: length))
        }
    }
}
