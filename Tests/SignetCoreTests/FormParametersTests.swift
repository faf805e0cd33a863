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
