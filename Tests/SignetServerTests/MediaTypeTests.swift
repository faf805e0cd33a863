import Testing

@testable import SignetServer

@Suite("The media type of a Content-Type header (RFC 9110 §8.3.1)")
struct MediaTypeTests {
    @Test("lowercased, without parameters and without the spaces and tabs around it")
    func mediaTypes() {
        let cases: [(String?, String?)] = [
            (nil, nil),
            ("", ""),
            ("application/x-www-form-urlencoded", "application/x-www-form-urlencoded"),
            ("Application/X-WWW-Form-Urlencoded", "application/x-www-form-urlencoded"),
            ("application/json; charset=utf-8", "application/json"),
            (" \tapplication/json \t; charset=UTF-8", "application/json"),
            ("TEXT/PLAIN;", "text/plain"),
            (";charset=utf-8", ""),
            ("   ", ""),
            ("application/x-www-form-urlencodedx", "application/x-www-form-urlencodedx"),
            ("applicätion/json", "applicätion/json"),
        ]
        for (header, expected) in cases {
            #expect(RequestParameters.mediaType(of: header) == expected, "\(header ?? "nil")")
        }
    }
}
