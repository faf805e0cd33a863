import Crypto
import Foundation
import SignetClient
import Testing
import X509

@Suite("DeviceCSR: the PKCS#10 request a device key signs")
struct DeviceCSRTests {
    @Test("parses back with swift-certificates, ES256, signature valid, public key the key's")
    func parsesAndVerifies() async throws {
        let key = SoftwareDeviceKey()
        let pem = try await DeviceCSR.make(for: key)
        #expect(pem.hasPrefix("-----BEGIN CERTIFICATE REQUEST-----"))
        let csr = try CertificateSigningRequest(pemEncoded: pem)
        #expect(csr.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(csr.publicKey == Certificate.PublicKey(key.key.publicKey))
        #expect(csr.publicKey.isValidSignature(csr.signature, for: csr))
        #expect(csr.subject == (try DistinguishedName { CommonName(DeviceCSR.commonName) }))
    }

    @Test("a CSR whose public key is swapped for another no longer verifies")
    func swappedKeyFails() async throws {
        let csr = try CertificateSigningRequest(pemEncoded: try await DeviceCSR.make(for: SoftwareDeviceKey()))
        let forged = try CertificateSigningRequest(
            version: csr.version, subject: csr.subject, publicKey: Certificate.PublicKey(P256.Signing.PrivateKey().publicKey),
            attributes: csr.attributes,
            signatureAlgorithm: csr.signatureAlgorithm, signature: csr.signature)
        #expect(!forged.publicKey.isValidSignature(forged.signature, for: forged))
    }

    @Test("each request is signed afresh by the key it names: two keys, two requests, each valid only under its own key")
    func twoKeys() async throws {
        let first = try CertificateSigningRequest(pemEncoded: try await DeviceCSR.make(for: SoftwareDeviceKey()))
        let second = try CertificateSigningRequest(pemEncoded: try await DeviceCSR.make(for: SoftwareDeviceKey()))
        #expect(first.publicKey != second.publicKey)
        #expect(!first.publicKey.isValidSignature(second.signature, for: second))
    }
}
