import Crypto
import Foundation
import SignetCore
import Testing

/// A deterministic generator, so a failing case can be reproduced from its seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("UAF TLV: encoding, strict reading, and no crash on any input")
struct UAFTLVTests {
    func sampleKRD(extensions: [UAFExtension] = []) -> UAFKeyRegistrationData {
        UAFKeyRegistrationData(
            aaid: "F1D0#1001", signatureAlgorithm: .secp256r1ECDSASHA256DER, publicKeyFormat: .eccX962DER,
            finalChallengeHash: Array(repeating: 7, count: 32), keyID: Array(repeating: 9, count: 32), signCounter: 3, registrationCounter: 1,
            publicKey: Array(P256.Signing.PrivateKey().publicKey.derRepresentation), extensions: extensions)
    }

    @Test("tags and lengths are little-endian, and the value follows")
    func wireFormat() throws {
        let item = UAFTLV(.aaid, Array("F1D0#1001".utf8))
        #expect(item.encoded.prefix(4) == [0x0B, 0x2E, 0x09, 0x00])
        #expect(Array(item.encoded.dropFirst(4)) == Array("F1D0#1001".utf8))
        #expect(UAFTag.regAssertion.isComposite)
        #expect(!UAFTag.aaid.isComposite)
        #expect(try UAFTLV.single(item.encoded) == item)
    }

    @Test("a registration assertion round-trips, and its signed bytes are exactly the KRD item")
    func registrationRoundTrip() throws {
        let krd = sampleKRD(extensions: [UAFExtension(id: UAFPINProof.keyExtension, data: Array(repeating: 4, count: 65), critical: true)])
        let assertion = UAFRegistrationAssertion(keyRegistrationData: krd, surrogateSignature: [1, 2, 3])
        let read = try UAFRegistrationAssertion(tlv: assertion.tlv.encoded)
        #expect(read == assertion)
        #expect(read.signedBytes == krd.tlv.encoded)
        #expect(read.keyRegistrationData.signCounter == 3)
        #expect(read.keyRegistrationData.registrationCounter == 1)
        #expect(read.keyRegistrationData.extensions.first?.id == UAFPINProof.keyExtension)
    }

    @Test("an authentication assertion round-trips, with and without a transaction hash")
    func authenticationRoundTrip() throws {
        for transaction in [[UInt8](), Array(repeating: 5, count: 32)] {
            let data = UAFSignedData(
                aaid: "F1D0#0001", authenticationMode: transaction.isEmpty ? .userVerified : .transactionConfirmed,
                signatureAlgorithm: .secp256r1ECDSASHA256Raw,
                authenticatorNonce: Array(repeating: 1, count: 8), finalChallengeHash: Array(repeating: 2, count: 32),
                transactionContentHash: transaction,
                keyID: Array(repeating: 3, count: 16), signCounter: 0x0102_0304)
            let assertion = UAFAuthenticationAssertion(signedData: data, signature: Array(repeating: 6, count: 64))
            let read = try UAFAuthenticationAssertion(tlv: assertion.tlv.encoded)
            #expect(read == assertion)
            #expect(read.signedData.signCounter == 0x0102_0304)
        }
    }

    @Test("property: random item trees round-trip through encoding and reading")
    func propertyRoundTrip() throws {
        var random = SeededGenerator(state: 42)
        func tree(depth: Int) -> UAFTLV {
            if depth == 0 || Bool.random(using: &random) {
                let tag = UAFTag(rawValue: UInt16.random(in: 0...0x0FFF, using: &random) | 0x2000)
                return UAFTLV(tag, (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            }
            let tag = UAFTag(rawValue: UInt16.random(in: 0...0x0FFF, using: &random) | 0x3000)
            return UAFTLV(tag, children: (0..<Int.random(in: 0...4, using: &random)).map { _ in tree(depth: depth - 1) })
        }
        for _ in 0..<300 {
            let items = (0..<Int.random(in: 1...4, using: &random)).map { _ in tree(depth: 3) }
            let bytes = items.flatMap(\.encoded)
            let read = try UAFTLV.sequence(bytes)
            #expect(read == items)
            for (original, copy) in zip(items, read) where original.tag.isComposite {
                #expect(try copy.children().flatMap(\.encoded) == original.value)
            }
        }
    }

    @Test("every truncation of a valid assertion is an error, never a crash or a partial read")
    func truncations() throws {
        let registration = UAFRegistrationAssertion(keyRegistrationData: sampleKRD(), surrogateSignature: Array(repeating: 1, count: 70)).tlv.encoded
        for length in 0..<registration.count {
            #expect(throws: SignetError.self, "cut at \(length)") { _ = try UAFRegistrationAssertion(tlv: Array(registration.prefix(length))) }
        }
        #expect(throws: SignetError.self) { _ = try UAFRegistrationAssertion(tlv: registration + [0]) }
    }

    @Test("fuzz: random bytes, random bit flips and random lengths give errors or values, never a crash")
    func fuzz() {
        var random = SeededGenerator(state: 7)
        let valid = UAFRegistrationAssertion(keyRegistrationData: sampleKRD(), surrogateSignature: Array(repeating: 1, count: 70)).tlv.encoded
        var accepted = 0
        for round in 0..<3000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let index = Int.random(in: 0..<bytes.count, using: &random)
                    bytes[index] ^= UInt8(1 << Int.random(in: 0...7, using: &random))
                }
            } else {
                bytes = (0..<Int.random(in: 0...120, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            if (try? UAFRegistrationAssertion(tlv: bytes)) != nil { accepted += 1 }
            _ = try? UAFAuthenticationAssertion(tlv: bytes)
            _ = try? UAFTLV.sequence(bytes)
        }
        // Flips inside values (key bytes, hashes) still parse; flips in tags and lengths must not.
        #expect(accepted < 3000)
    }

    @Test("strict reading: a missing, repeated, unknown or wrong-length tag is refused, each with its reason")
    func strictness() throws {
        let krd = sampleKRD()
        var children = try krd.tlv.children()
        func assertion(_ items: [UAFTLV]) -> [UInt8] {
            UAFTLV(
                .regAssertion,
                children: [UAFTLV(.keyRegistrationData, children: items), UAFTLV(.attestationBasicSurrogate, children: [UAFTLV(.signature, [1])])]
            ).encoded
        }
        func reason(_ items: [UAFTLV]) -> String? {
            do {
                _ = try UAFRegistrationAssertion(tlv: assertion(items))
                return nil
            } catch let error as SignetError { return error.reason } catch { return "other" }
        }
        #expect(reason(children) == nil)
        #expect(reason(children.filter { $0.tag != .keyID })?.contains("TAG_KEYID") == true)
        #expect(reason(children + [UAFTLV(.keyID, Array(repeating: 1, count: 32))])?.contains("twice") == true)
        #expect(reason(children + [UAFTLV(.authenticatorNonce, [1])])?.contains("unexpected") == true)
        children[children.firstIndex { $0.tag == .finalChallengeHash }!] = UAFTLV(.finalChallengeHash, [1, 2, 3])
        #expect(reason(children)?.contains("TAG_FINAL_CHALLENGE_HASH has 3 bytes") == true)
        var badAAID = try krd.tlv.children()
        badAAID[0] = UAFTLV(.aaid, Array("F1D0-1001".utf8))
        #expect(reason(badAAID)?.contains("AAID") == true)
        // Two attestations, or none.
        let both = UAFTLV(
            .regAssertion,
            children: [
                krd.tlv, UAFTLV(.attestationBasicSurrogate, children: [UAFTLV(.signature, [1])]),
                UAFTLV(.attestationBasicFull, children: [UAFTLV(.signature, [1])]),
            ])
        #expect(throws: SignetError.self) { _ = try UAFRegistrationAssertion(tlv: both.encoded) }
        #expect(throws: SignetError.self) { _ = try UAFRegistrationAssertion(tlv: UAFTLV(.regAssertion, children: [krd.tlv]).encoded) }
        // An authentication assertion is not a registration assertion.
        let signed = UAFAuthenticationAssertion(
            signedData: UAFSignedData(
                aaid: "F1D0#1001", authenticationMode: .userVerified, signatureAlgorithm: .secp256r1ECDSASHA256DER,
                authenticatorNonce: Array(repeating: 1, count: 8),
                finalChallengeHash: Array(repeating: 2, count: 32), transactionContentHash: [], keyID: Array(repeating: 3, count: 16), signCounter: 0),
            signature: [1])
        #expect(throws: SignetError.self) { _ = try UAFRegistrationAssertion(tlv: signed.tlv.encoded) }
        #expect(throws: SignetError.self) { _ = try UAFAuthenticationAssertion(tlv: assertion(try krd.tlv.children())) }
    }
}
