import Foundation
import SignetCore
import Testing

@Suite("base64url (RFC 4648 §5) without padding")
struct Base64URLTests {
    @Test("RFC 4648 §10's vectors, in the URL alphabet without padding, both ways")
    func vectors() {
        let vectors = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Data(plain.utf8).base64URLEncodedString() == encoded)
            #expect(Data(base64URLEncoded: encoded) == Data(plain.utf8))
        }
        #expect(Data([0xFB, 0xFF, 0xBF]).base64URLEncodedString() == "-_-_")
        #expect(Data(base64URLEncoded: "-_-_") == Data([0xFB, 0xFF, 0xBF]))
    }

    @Test("every length and byte value round-trips, and matches Foundation's base64 with the alphabet swapped")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let encoded = bytes.base64URLEncodedString()
            let foundation = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Data(base64URLEncoded: encoded) == bytes)
        }
    }

    @Test("padding, the standard alphabet, spaces, non-ASCII, impossible lengths and non-canonical last characters are refused")
    func refusals() {
        for text in ["Zg==", "Zm9v+", "Zm9v/", "Zm 9v", "Zm9vé", "Z", "Zm9vY", "Zh", "Zm9"] {
            #expect(Data(base64URLEncoded: text) == nil, "\(text)")
        }
        #expect(Data(base64URLEncoded: "Zm8") == Data("fo".utf8), "Zm9 differs from Zm8 only in unused bits: one encoding is canonical")
    }
}
