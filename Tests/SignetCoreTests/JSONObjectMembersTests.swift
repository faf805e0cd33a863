import Foundation
import SignetCore
import Testing

/// JSON read without `Codable` (Sources/SignetCore/Encoding/JSONObjectMembers.swift), checked
/// against `JSONDecoder`: every text reads to the same value or fails both ways.
@Suite("JSON objects read member by member")
struct JSONObjectMembersTests {
    /// `T` read from `text` through the hand-written path with its fallback, and by `JSONDecoder` alone, agree.
    /// Returns whether the hand-written reader answered by itself.
    @discardableResult
    static func expectAgreement<T: JSONObjectReadable & Equatable>(_ type: T.Type, _ text: String, decoder: JSONDecoder = JSONDecoder()) -> Bool {
        let viaReader = try? T.decode(Array(text.utf8), fallback: decoder)
        let viaDecoder = try? decoder.decode(T.self, from: Data(text.utf8))
        #expect(viaReader == viaDecoder, "\(T.self): \(text)")
        guard case .object(let members) = JSONObjectMembers.scan(Array(text.utf8)), let plain = try? T(members: members) else { return false }
        #expect(plain == viaDecoder, "\(T.self) read by hand: \(text)")
        return true
    }

    @Test("client assertion claims: plain texts are read by hand, anything else as JSONDecoder reads it")
    func assertionClaims() {
        let plain = [
            #"{"iss":"c","sub":"c","aud":"https://id.example/","exp":1764172800,"iat":1764172700,"jti":"j"}"#,
            #"{ "iss" : "c\u00e9\"\\\/" , "sub":"c", "aud":"a", "exp":-0, "nbf":null, "jti":"😀", "extra":{"nested":[1,{"x":"y"}]} }"#,
            #"{"iss":"c","sub":"c","aud":"a","exp":9223372036854775,"iat":0,"nbf":-12,"jti":"j"}"#,
        ]
        for text in plain { #expect(Self.expectAgreement(ClientAssertionClaims.self, text), "\(text)") }
        let other = [
            #"{"iss":"c","sub":"c","aud":["a"],"exp":1,"jti":"j"}"#,  // aud as an array: JSONDecoder's typeMismatch
            #"{"iss":"c","sub":"c","aud":"a","exp":1.0,"jti":"j"}"#,
            #"{"iss":"c","sub":"c","aud":"a","exp":1.5,"jti":"j"}"#,
            #"{"iss":"c","sub":"c","aud":"a","exp":1e3,"jti":"j"}"#,
            #"{"iss":"c","sub":"c","aud":"a","exp":99999999999999999999,"jti":"j"}"#,
            #"{"iss":"c","sub":"c","aud":"a","exp":"1","jti":"j"}"#,
            #"{"iss":"c","sub":"c","aud":"a","jti":"j"}"#,
            #"{"iss":null,"sub":"c","aud":"a","exp":1,"jti":"j"}"#,
            #"{"iss":1,"sub":"c","aud":"a","exp":1,"jti":"j"}"#,
            #"{"iss":"c","sub":"c","aud":"a","exp":1,"iat":true,"jti":"j"}"#,
            #"{"iss":"\ud800","sub":"c","aud":"a","exp":1,"jti":"j"}"#,
            #"[1]"#, "", "{",
        ]
        for text in other { #expect(!Self.expectAgreement(ClientAssertionClaims.self, text), "\(text)") }
    }

    @Test("JOSE headers: alg required, kid and typ optional, other members left alone")
    func headers() {
        #expect(Self.expectAgreement(JOSEHeader.self, #"{"alg":"ES256","kid":"k","typ":"JWT"}"#))
        #expect(Self.expectAgreement(JOSEHeader.self, #"{"typ":"dpop+jwt","alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":"a","y":"b"}}"#))
        #expect(Self.expectAgreement(JOSEHeader.self, #"{"alg":"ES256","kid":null}"#))
        #expect(!Self.expectAgreement(JOSEHeader.self, #"{"kid":"k"}"#))
        #expect(!Self.expectAgreement(JOSEHeader.self, #"{"alg":["ES256"]}"#))
        #expect(!Self.expectAgreement(JOSEHeader.self, #"{"alg":"ES256","typ":7}"#))
    }

    @Test("arrays of strings, with whitespace, empty, or holding something else")
    func stringArrays() throws {
        let members = try #require(Self.object(#"{"a":[ "x" , "y\n" ],"e":[],"n":[1],"m":["x",null],"s":"x","z":null}"#))
        #expect(try members.strings("a") == ["x", "y\n"])
        #expect(try members.strings("e") == [])
        #expect(try members.stringsIfPresent("z") == nil)
        #expect(try members.stringsIfPresent("absent") == nil)
        for name in ["n", "m", "s", "absent", "z"] { #expect(throws: JSONObjectMembers.Unplain.self) { try members.strings(name) } }
    }

    @Test("dates in milliseconds: any JSON number, as JSONDecoder's millisecondsSince1970 reads it")
    func dates() throws {
        struct Stamp: JSONObjectReadable, Equatable {
            var at: Date
            var was: Date?
            init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
                at = try members.date(millisecondsIn: "at")
                was = try members.dateIfPresent(millisecondsIn: "was")
            }
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        for number in [
            "0", "-1", "1764172800123", "1764172800123.457", "1.7641728001234567e12", "1E3", "0.0001", "253402300799999", "-62135596800000",
        ] {
            #expect(Self.expectAgreement(Stamp.self, #"{"at":\#(number),"was":\#(number)}"#, decoder: decoder), "\(number)")
        }
        #expect(Self.expectAgreement(Stamp.self, #"{"at":1,"was":null}"#, decoder: decoder))
        for text in [#"{"at":"1"}"#, #"{"at":null}"#, #"{"was":1}"#, #"{"at":1e400}"#, #"{"at":true}"#] {
            #expect(!Self.expectAgreement(Stamp.self, text, decoder: decoder), "\(text)")
        }
    }

    @Test("the scan is the strict one: repeated names and malformed text are reported, values included")
    func strictScan() {
        #expect(JSONObjectMembers.scan(Array(#"{"a":1,"a":2}"#.utf8)) == .repeated("a"))
        // Invalid UTF-8 inside a value, not only in a name.
        #expect(JSONObjectMembers.scan([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]) == .malformed)
        #expect(JSONObjectMembers.scan([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0xA9, 0x22, 0x7D]) != .malformed)
        #expect(JSONObjectMembers.scan(Array("{\"a\":\"x\u{1}\"}".utf8)) == .malformed)
        #expect(JSONObjectMembers.scan(Array(#"{"a":"\x"}"#.utf8)) == .malformed)
        #expect(JSONObjectMembers.scan(Array(#"{"a":"\ud800"}"#.utf8)) == .malformed)
    }

    static func object(_ text: String) -> JSONObjectMembers? {
        guard case .object(let members) = JSONObjectMembers.scan(Array(text.utf8)) else { return nil }
        return members
    }
}
