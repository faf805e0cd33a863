// The one hex encoder: lowercase, two digits a byte.
import Crypto
import Foundation
import SignetCore
import Testing

@Suite("Hex encoding")
struct HexTests {
    @Test("bytes become lowercase hex, two digits each, leading zeros kept")
    func bytes() {
        #expect([UInt8]().hexEncodedString() == "")
        #expect([0x00, 0x01, 0x0A, 0x7F, 0x80, 0xFF].hexEncodedString() == "00010a7f80ff")
        #expect(Data([0xDE, 0xAD, 0xBE, 0xEF]).hexEncodedString() == "deadbeef")
    }

    @Test("a SHA-256 digest matches the FIPS 180-2 vector for \"abc\"")
    func digest() {
        #expect(SHA256.hash(data: Data("abc".utf8)).hexEncodedString() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
