import Foundation
import SignetCore
import Testing

@Suite("Strict scan of JSON member names")
struct JSONMemberNamesTests {
    func scan(_ text: String) -> JSONMemberNames { JSONMemberNames(scanning: Array(text.utf8)) }

    @Test("distinct names are listed in order, whatever the values hold")
    func unique() {
        #expect(scan(#"{}"#) == .unique([]))
        #expect(
            scan(" {\n\t\"a\" : 1 , \"b\":[1,{\"a\":2}], \"c\":{\"a\":{\"a\":null}}, \"d\":\"}{,\\\"a\\\":\" } \r\n")
                == .unique(["a", "b", "c", "d"]))
        #expect(scan(#"{"n":-0.5e+10,"t":true,"f":false,"z":null,"s":"\u00e9\ud83d\ude00"}"#) == .unique(["n", "t", "f", "z", "s"]))
    }

    @Test("a repeated top-level name is reported, also when spelled with escapes or in another normal form")
    func repeated() {
        #expect(scan(#"{"alg":"none","alg":"ES256"}"#) == .repeated("alg"))
        #expect(scan(#"{"alg":"ES256","kid":"a","a\u006cg":"none"}"#) == .repeated("alg"))
        #expect(scan(#"{"aud":["x"],"x":{"aud":1},"\u0061ud":"y"}"#) == .repeated("aud"))
        // é precomposed and e + combining acute: one key to Swift's String, and so to JSONDecoder.
        #expect(scan("{\"\u{E9}\":1,\"e\u{301}\":2}") == .repeated("\u{E9}"))
    }

    @Test("a repeat is found wherever it stands in a large object, past the names compared one by one")
    func repeatedInLargeObjects() {
        for count in [15, 16, 17, 40] {
            let names = (0..<count).map { "n\($0)" }
            let distinct = "{" + names.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
            #expect(scan(distinct) == .unique(names), "\(count) names")
            for (first, second) in [(0, count - 1), (count - 2, count - 1), (count / 2, count - 1), (0, 1)] {
                var repeated = names
                repeated[second] = names[first]
                let text = "{" + repeated.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
                #expect(scan(text) == .repeated(names[first]), "\(count) names, \(first) repeated at \(second)")
            }
            // Canonically equivalent spellings count as one name past the limit too.
            let accented = "{" + names.map { "\"\($0)\":1" }.joined(separator: ",") + ",\"\u{E9}\":1,\"e\u{301}\":2}"
            #expect(scan(accented) == .repeated("\u{E9}"), "\(count) names, then é twice")
        }
    }

    @Test("names repeated only inside nested values are not the top level's business")
    func nested() {
        #expect(scan(#"{"cnf":{"jwk":{"kty":"EC","kty":"EC"}},"list":[{"a":1,"a":2}]}"#) == .unique(["cnf", "list"]))
    }

    @Test("anything but a single JSON object in UTF-8 is malformed")
    func malformed() {
        let cases = [
            "", "[]", "\"a\"", "1", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1}{}", "{\"a\":1} x", "{a:1}",
            "{\"a\":[1,2}", "{\"a\":{\"b\":1]}", "{\"a\":tru}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}", "{\"a\":1e}",
            #"{"a\x":1}"#, #"{"\ud800":1}"#, #"{"\udc00":1}"#, #"{"\u12":1}"#, "{\"a\nb\":1}", "\u{FEFF}{}",
            "{\"a\":" + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}",
        ]
        for text in cases { #expect(scan(text) == .malformed, "\(text.prefix(40))") }
        // Nested values are checked in full: every `:` and `,` where it belongs (a review found
        // them only bracket-matched, which mattered once values were read without JSONDecoder).
        let nested = [
            #"{"a":[1 2]}"#, #"{"a":{"b"}}"#, #"{"a":[,:]}"#, #"{"a":{1:2}}"#, #"{"a":[1:2]}"#, #"{"a":{"b" "c"}}"#, #"{"a":{,}}"#,
            #"{"a":[,]}"#, #"{"a":{"b":}}"#, #"{"a":[1,,2]}"#, #"{"a":{"b":1 "c":2}}"#, #"{"a":[[]"#, #"{"a":{"b":[1,{"c":[2 3]}]}}"#,
        ]
        for text in nested {
            #expect(scan(text) == .malformed, "\(text)")
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) == nil, "JSONSerialization should refuse \(text) too")
        }
        // Stricter than Foundation, as RFC 8259 is: a trailing comma (which JSONSerialization and
        // JSONDecoder let pass) and a bad escape in a nested value JSONDecoder never reads.
        for text in [#"{"a":[1,]}"#, #"{"a":{"b":1,}}"#, #"{"a":{"b":"\x"}}"#] { #expect(scan(text) == .malformed, "\(text)") }
        #expect(scan(#"{"a":{"b":[1,{"c":[2,3]},[],{}]},"d":[ "x" , { } , [ ] ]}"#) == .unique(["a", "d"]))
        #expect(JSONMemberNames(scanning: [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) == .malformed)
    }

    @Test("what the scan accepts, JSONSerialization reads with the same names")
    func agreesWithFoundation() throws {
        let text = #"{"a":1,"b":{"c":[true,null,"x\"y"]},"\u00e9":"\ud83d\ude00","e":-1.5E-3}"#
        guard case .unique(let names) = scan(text) else { Issue.record("not unique"); return }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(names) == Set(object.keys))
    }
}

@Suite("Compact JWT structure")
struct CompactJWTTests {
    func token(_ header: String, _ claims: String, signature: String = "c2ln") -> String {
        Data(header.utf8).base64URLEncodedString() + "." + Data(claims.utf8).base64URLEncodedString() + "." + signature
    }

    @Test("a well-formed token gives its header, claims and signature")
    func parses() throws {
        let jwt = try CompactJWT.parse(token(#"{"alg":"ES256","kid":"k","typ":"JWT"}"#, #"{"sub":"a"}"#)).get()
        #expect(jwt.header == JOSEHeader(compact: token(#"{"alg":"ES256","kid":"k","typ":"JWT"}"#, #"{"sub":"a"}"#)))
        #expect(jwt.header.kid == "k")
        #expect(String(decoding: jwt.claims, as: UTF8.self) == #"{"sub":"a"}"#)
        #expect(jwt.signature == Data("sig".utf8))
    }

    @Test("a header or claims set that is not JSON deep inside is refused, though its top level reads by hand")
    func nestedNotJSON() {
        #expect(CompactJWT.parse(token(#"{"alg":"ES256","kid":"k","x":[1 2]}"#, #"{"sub":"a"}"#)) == .failure(.malformedHeader))
        #expect(
            CompactJWT.parse(token(#"{"alg":"ES256"}"#, #"{"iss":"c","sub":"c","aud":"a","exp":1,"jti":"j","z":{"a"},"w":[,:]}"#))
                == .failure(.malformedClaims))
        #expect(CompactJWT.parse(token(#"{"alg":"ES256"}"#, #"{"sub":"a","x":{"y":[1,]}}"#)) == .failure(.malformedClaims))
    }

    @Test("repeated header members and claims are refused by name, and JOSEHeader refuses them too")
    func repeats() {
        let header = token(#"{"alg":"none","alg":"ES256"}"#, #"{"sub":"a"}"#)
        #expect(CompactJWT.parse(header) == .failure(.repeatedHeaderMember("alg")))
        #expect(JOSEHeader(compact: header) == nil)
        let claims = token(#"{"alg":"ES256"}"#, #"{"aud":"x","sub":"a","aud":"y"}"#)
        #expect(CompactJWT.parse(claims) == .failure(.repeatedClaim("aud")))
        #expect(JOSEHeader(compact: claims) == nil)
        #expect(CompactJWT.Refusal.repeatedClaim("aud").description.contains("repeats the claim aud"))
    }

    @Test("shapes that are not a compact JWT with JSON object parts are refused")
    func shapes() {
        #expect(CompactJWT.parse("a.b") == .failure(.notCompact))
        #expect(CompactJWT.parse(token(#"{"alg":"none"}"#, "{}", signature: "")) == .failure(.notCompact))
        #expect(CompactJWT.parse("e30.e30.c2ln.c2ln") == .failure(.notCompact))
        #expect(CompactJWT.parse("e3+.e30.c2ln") == .failure(.notCompact))
        #expect(CompactJWT.parse(token(#"{"kid":"k"}"#, "{}")) == .failure(.malformedHeader))
        #expect(CompactJWT.parse(token(#"["ES256"]"#, "{}")) == .failure(.malformedHeader))
        #expect(CompactJWT.parse(token(#"{"alg":"ES256"}"#, #"["a"]"#)) == .failure(.malformedClaims))
        #expect(CompactJWT.parse(token(#"{"alg":"ES256"}"#, "not json")) == .failure(.malformedClaims))
    }
}
