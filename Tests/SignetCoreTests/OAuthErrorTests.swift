import Foundation
import SignetCore
import Testing

@Suite("OAuthError text is wire-safe (RFC 6749 §5.2)")
struct OAuthErrorTests {
    @Test("the allowed set is printable ASCII without quote and backslash")
    func allowedSet() {
        for value in UInt32(0)...0x2100 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let allowed = (0x20...0x21).contains(value) || (0x23...0x5B).contains(value) || (0x5D...0x7E).contains(value)
            #expect(OAuthError.isWireSafe(String(Character(scalar))) == allowed, "U+\(String(value, radix: 16))")
        }
    }

    @Test("typographic characters become ASCII look-alikes; anything else outside the set a question mark")
    func sanitising() {
        let error = OAuthError(
            .invalidRequest, "\u{201C}a\u{201D} \u{2018}b\u{2019} c\u{2013}d\u{2014}e \u{2026} \"f\" g\\h \u{A7}3.2 \u{E9}\u{1F600}\n\ti")
        #expect(error.errorDescription == "'a' 'b' c-d-e ... 'f' g/h section 3.2 ??  i")
        #expect(OAuthError.isWireSafe(error.errorDescription ?? ""))
        #expect(OAuthError(.invalidRequest, "plain text: fine!").errorDescription == "plain text: fine!")
        #expect(OAuthError(.invalidRequest).errorDescription == nil)
    }

    @Test("codes and descriptions received from a server are made wire-safe too")
    func decoding() throws {
        let received = try JSONDecoder().decode(
            OAuthError.self, from: Data(#"{"error":"bad\"code","error_description":"a \u201cquoted\u201d \\ text"}"#.utf8))
        #expect(received.error.rawValue == "bad'code")
        #expect(received.errorDescription == "a 'quoted' / text")
        #expect(OAuthError.Code(rawValue: "x\u{2013}y").rawValue == "x-y")
        let encoded = String(decoding: try JSONEncoder().encode(received), as: UTF8.self)
        #expect(!encoded.contains("\\\"") && !encoded.contains("\\\\"))
    }

    @Test("the native login's error bodies and the JWT refusals are wire-safe as well")
    func otherCarriers() {
        let body = APIErrorBody(error: "bad\u{201D}", errorDescription: "wait\u{2026} \"now\"", retryable: false)
        #expect(body.error == "bad'")
        #expect(body.errorDescription == "wait... 'now'")
        let refusals: [CompactJWT.Refusal] = [.notCompact, .malformedHeader, .malformedClaims, .repeatedHeaderMember("alg"), .repeatedClaim("aud")]
        for refusal in refusals { #expect(OAuthError.isWireSafe(refusal.description), "\(refusal)") }
    }
}
