import SignetCore
import Testing

@Suite("Form parameters")
struct FormParametersTests {
    @Test("decoding keeps order, decodes + and percent escapes")
    func decoding() throws {
        let parameters = try #require(FormParameters(encoded: "a=1&b=hello+world&c=%2F%3D"))
        #expect(parameters["a"] == "1")
        #expect(parameters["b"] == "hello world")
        #expect(parameters["c"] == "/=")
        #expect(parameters.duplicatedNames.isEmpty)
    }

    @Test("repeated names are reported")
    func duplicates() throws {
        let parameters = try #require(FormParameters(encoded: "a=1&b=2&a=3"))
        #expect(parameters.duplicatedNames == ["a"])
    }

    @Test("malformed percent-encoding is refused")
    func malformed() {
        #expect(FormParameters(encoded: "a=%zz") == nil)
        // A cut-off escape, at the end of a value and of a name.
        #expect(FormParameters(encoded: "a=%") == nil)
        #expect(FormParameters(encoded: "a=%4") == nil)
        #expect(FormParameters(encoded: "a%=1") == nil)
        #expect(FormParameters(encoded: "a=%4&b=1") == nil)
        // Bytes that are not UTF-8.
        #expect(FormParameters(encoded: "a=%FF") == nil)
        #expect(FormParameters(encoded: "a=%C3") == nil)
    }

    @Test("escapes decode to UTF-8 text; + is a space only when not escaped")
    func escapes() throws {
        let parameters = try #require(FormParameters(encoded: "n%C3%A4me=caf%c3%a9&p=+%2B+&e=&bare"))
        #expect(parameters["näme"] == "café")
        #expect(parameters["p"] == " + ")
        #expect(parameters["e"] == "")
        #expect(parameters["bare"] == "")
    }

    @Test("pairs are split on the bytes & and =, as the URL standard does, even before a combining mark")
    func splitsOnBytes() throws {
        // As Characters, "&\u{301}" is one grapheme cluster and a String split would not cut there.
        let parameters = try #require(FormParameters(encoded: "a=1&\u{301}=2&b=x=y&&c"))
        #expect(parameters.pairs.map(\.name) == ["a", "\u{301}", "b", "c"])
        #expect(parameters["\u{301}"] == "2")
        #expect(parameters["b"] == "x=y")
        #expect(parameters["c"] == "")
        #expect(try #require(FormParameters(encoded: "")).pairs.isEmpty)
        #expect(try #require(FormParameters(encoded: "&&")).pairs.isEmpty)
    }

    @Test("encoding round-trips reserved characters")
    func roundTrip() throws {
        var parameters = FormParameters()
        parameters.append("redirect_uri", "com.example.app:/cb?x=1&y=2")
        parameters.append("state", "a b+c")
        let decoded = try #require(FormParameters(encoded: parameters.encoded))
        #expect(decoded == parameters)
    }
}
