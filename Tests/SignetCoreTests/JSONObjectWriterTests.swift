import Foundation
@testable import SignetCore
import Testing

/// The JSON the token endpoint writes without `Codable` (Sources/SignetCore/Encoding/JSONObjectWriter.swift),
/// checked against `JSONEncoder`, whose `Codable` conformances define each type's JSON.
@Suite("JSON objects written member by member")
struct JSONObjectWriterTests {
    /// Quotes, backslashes, every control character, a slash, DEL, accents, an emoji and a lone combining mark.
    static let awkward = "a\"b\\c/d\u{7F}é😀\u{301}" + String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })

    private func object(_ bytes: [UInt8]) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
    }

    /// The hand-written text and `JSONEncoder`'s mean the same object, every member of `value` is
    /// in it (`members`, all set), and it decodes back to `value`.
    private func expectSameAsCodable<T: JSONObjectWritable & Decodable & Equatable>(_ value: T, members: Int) throws {
        let written = value.jsonBytes()
        let hand = try object(written)
        let codable = try object(Array(try JSONEncoder().encode(value)))
        #expect(hand == codable)
        #expect(hand.count == members, "a member of \(T.self) is missing from the test value or from writeJSON")
        #expect(try JSONDecoder().decode(T.self, from: Data(written)) == value)
    }

    @Test("ID token claims with every member set, and with none of the optional ones")
    func idTokenClaims() throws {
        var claims = IDTokenClaims(
            iss: "https://id.example/realm", sub: Self.awkward, aud: ["c1", "c2"], azp: "c1", exp: 2_000_000_000, iat: -5, authTime: 0,
            nonce: Self.awkward, acr: "urn:acr:2", amr: ["pwd", "sms"], atHash: "h", sid: "s")
        claims.name = "Ærø Ω"
        claims.preferredUsername = "u"
        claims.email = "e@x.example"
        claims.phoneNumber = "+4512345678"
        claims.instanceID = "i"
        try expectSameAsCodable(claims, members: Mirror(reflecting: claims).children.count)
        let bare = IDTokenClaims(
            iss: "i", sub: "s", aud: [], azp: nil, exp: Int.max, iat: Int.min, authTime: nil, nonce: nil, acr: nil, amr: nil, atHash: nil)
        try expectSameAsCodable(bare, members: 5)
    }

    @Test("access token claims: one audience as a string, several as an array, the confirmation nested")
    func accessTokenClaims() throws {
        var claims = AccessTokenClaims(
            iss: "https://id.example", sub: Self.awkward, aud: ["https://api.example"], clientID: "c", exp: 1, iat: 2, jti: "j",
            scope: "openid profile",
            authTime: 3, acr: "a", amr: [], grantID: "g")
        claims.cnf = Confirmation(jkt: "t", x5tS256: "x")
        claims.attestation = "none"
        try expectSameAsCodable(claims, members: Mirror(reflecting: claims).children.count)
        #expect(try object(claims.jsonBytes())["aud"] as? String == "https://api.example")
        claims.aud = ["https://a.example", "https://b.example"]
        claims.cnf = Confirmation(jkt: "only")
        try expectSameAsCodable(claims, members: Mirror(reflecting: claims).children.count)
        try expectSameAsCodable(Confirmation(jkt: "t", x5tS256: Self.awkward), members: Mirror(reflecting: Confirmation()).children.count)
        let bare = AccessTokenClaims(
            iss: "i", sub: "s", aud: [], clientID: "c", exp: 0, iat: 0, jti: "", scope: "", authTime: nil, acr: nil, amr: nil, grantID: "g")
        try expectSameAsCodable(bare, members: 9)
    }

    @Test("a token response with and without its optional members")
    func tokenResponse() throws {
        // Six members: TokenResponse's mirror shows only its redacted description.
        let full = TokenResponse(accessToken: Self.awkward, tokenType: "DPoP", expiresIn: 300, refreshToken: "r", idToken: "i", scope: "openid")
        try expectSameAsCodable(full, members: 6)
        try expectSameAsCodable(TokenResponse(accessToken: "a", expiresIn: nil, refreshToken: nil, idToken: nil, scope: nil), members: 2)
    }

    @Test("strings keep every character, escaped where JSON needs it and nowhere else")
    func escaping() throws {
        struct Text: JSONObjectWritable {
            let value: String
            func writeJSON(into object: inout JSONObjectWriter) { object.member("v", value) }
        }
        for value in [Self.awkward, "", "\\", "\"", "\u{0}", "\u{2028}\u{2029}", String(repeating: "x", count: 5000)] {
            let written = Text(value: value).jsonBytes()
            #expect(try object(written)["v"] as? String == value)
            // Only `"` and `\` and control characters are escaped; other bytes are the string's own UTF-8.
            #expect(!written.contains { $0 < 0x20 })
        }
        #expect(String(decoding: Text(value: "a/é\n\u{1}").jsonBytes(), as: UTF8.self) == #"{"v":"a/é\n\u0001"}"#)
    }

    @Test("a date's milliseconds read back as the same number, as JSONEncoder writes them")
    func milliseconds() throws {
        struct Stamp: JSONObjectWritable {
            let at: Date
            func writeJSON(into object: inout JSONObjectWriter) { object.member("at", millisecondsOf: at) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(at, forKey: .at)
            }
            enum Key: CodingKey { case at }
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let seconds: [Double] = [
            0, 1, -1, 0.0005, 1_764_172_800.123_456_7, 1e12, 1e13 + 0.25, Date().timeIntervalSince1970, 253_402_300_799.999, -62_135_596_800,
        ]
        for value in seconds {
            let stamp = Stamp(at: Date(timeIntervalSince1970: value))
            // The number's text itself: JSONSerialization reads numbers less exactly than JSONDecoder.
            let hand = String(decoding: stamp.jsonBytes(), as: UTF8.self)
            #expect(hand == String(decoding: try encoder.encode(stamp), as: UTF8.self), "\(value)")
            #expect(Double(hand.dropFirst(#"{"at":"#.count).dropLast()) == stamp.at.timeIntervalSince1970 * 1000, "\(value)")
        }
        #expect(JSONNumberText.of(1_764_172_800_123) == "1764172800123")
        #expect(JSONNumberText.of(0.5) == "0.5")
    }
}
