// The device CA: issuing from PKCS#10 requests, refusing bad ones, checking what it issued, and openssl's opinion.
import Crypto
import Foundation
import SignetCore
import SignetServer
import SignetTesting
import SwiftASN1
import Testing
import X509
import CryptoExtras

@Suite("Device CA: certificates for app installations")
struct DeviceCertificateAuthorityTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 24 * 3600
    static let instanceID = "inst_0123456789abcdefXYZ-"

    let ca: DeviceCertificateAuthority

    init() throws {
        ca = try DeviceCertificateAuthority.make(name: "Test", validity: 365 * Self.day, now: Self.now)
    }

    // MARK: Helpers

    /// A CSR asking for far more than it gets: another name, serverAuth, a DNS name, CA rights.
    static func request(
        key: Certificate.PrivateKey = Certificate.PrivateKey(P256.Signing.PrivateKey()),
        signatureAlgorithm: Certificate.SignatureAlgorithm = .ecdsaWithSHA256
    ) throws -> CertificateSigningRequest {
        let greedy = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            try ExtendedKeyUsage([.serverAuth, .codeSigning])
            SubjectAlternativeNames([.dnsName("bank.example"), .uniformResourceIdentifier("urn:signet:device:someone-elses-device")])
        }
        return try CertificateSigningRequest(
            version: .v1,
            subject: try DistinguishedName {
                OrganizationName("Evil Corp")
                CommonName("admin")
            },
            privateKey: key,
            attributes: CertificateSigningRequest.Attributes([try .init(ExtensionRequest(extensions: greedy))]),
            signatureAlgorithm: signatureAlgorithm
        )
    }

    static func der(_ csr: CertificateSigningRequest) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(csr)
        return serializer.serializedBytes
    }

    static func pem(_ csr: CertificateSigningRequest) throws -> String {
        try csr.serializeAsPEM().pemString
    }

    func expectCode(_ code: SignetError.Code, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("expected \(code.label), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as SignetError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected SignetError \(code.label), got \(error)", sourceLocation: sourceLocation)
        }
    }

    /// A certificate signed with the CA's key but shaped by the test, for what the CA itself never issues.
    func forged(
        publicKey: Certificate.PublicKey = Certificate.PublicKey(P256.Signing.PrivateKey().publicKey),
        signer: P256.Signing.PrivateKey? = nil,
        issuer: DistinguishedName? = nil,
        notBefore: Date = now - 60, notAfter: Date = now + day,
        @ExtensionsBuilder extensions: () throws -> Result<Certificate.Extensions, any Error>
    ) throws -> Certificate {
        let caKey = try P256.Signing.PrivateKey(pemRepresentation: ca.privateKeyPEM)
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: issuer ?? ca.certificate.subject, subject: try DistinguishedName { CommonName(Self.instanceID) },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: try Certificate.Extensions(builder: extensions),
            issuerPrivateKey: Certificate.PrivateKey(signer ?? caKey)
        )
    }

    // MARK: The CA

    @Test("a new CA is a self-signed path-length-0 CA for certificate and CRL signing, named O=Signet")
    func caCertificate() throws {
        let certificate = ca.certificate
        #expect(certificate.subject == certificate.issuer)
        #expect(certificate.subject.description == "CN=Test Device CA,O=Signet")
        #expect(certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(certificate.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(P256.Signing.PublicKey(certificate.publicKey) != nil)
        #expect(try certificate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        #expect(certificate.extensions[oid: .X509ExtensionID.basicConstraints]?.critical == true)
        #expect(try certificate.extensions.keyUsage == KeyUsage(keyCertSign: true, cRLSign: true))
        #expect(certificate.extensions[oid: .X509ExtensionID.keyUsage]?.critical == true)
        #expect(try certificate.extensions.subjectKeyIdentifier == SubjectKeyIdentifier(hash: certificate.publicKey))
        #expect(certificate.notValidBefore == Self.now - 300)
        #expect(certificate.notValidAfter == Self.now + 365 * Self.day)
        #expect(certificate.serialNumber.bytes.count == 20)
        #expect(certificate.serialNumber.bytes.first! & 0x80 == 0)
        #expect(ca.fingerprint == SHA256.hash(data: try DeviceCertificateAuthority.derBytes(of: certificate)).hexEncodedString())
        #expect(ca.fingerprint.count == 64)
    }

    @Test("a CA's name must be printable and fit a common name")
    func caName() {
        expectCode(.invalidConfiguration) { _ = try DeviceCertificateAuthority.make(name: "", validity: Self.day, now: Self.now) }
        expectCode(.invalidConfiguration) { _ = try DeviceCertificateAuthority.make(name: "a\nb", validity: Self.day, now: Self.now) }
        expectCode(.invalidConfiguration) {
            _ = try DeviceCertificateAuthority.make(name: String(repeating: "x", count: 55), validity: Self.day, now: Self.now)
        }
        expectCode(.invalidConfiguration) { _ = try DeviceCertificateAuthority.make(name: "Test", validity: 0, now: Self.now) }
    }

    @Test("the CA's description shows its name and fingerprint, never its key")
    func secretSafe() {
        var dumped = ""
        dump(ca, to: &dumped)
        let text = [String(describing: ca), String(reflecting: ca), dumped]
        let keyBody = ca.privateKeyPEM.split(separator: "\n").dropFirst().first.map(String.init) ?? "unreachable"
        for shown in text {
            #expect(shown.contains(ca.fingerprint))
            #expect(shown.contains("****"))
            #expect(!shown.contains(keyBody))
            #expect(!shown.contains("PRIVATE KEY"))
        }
    }

    // MARK: Issuing

    @Test("a device certificate carries exactly what is promised, whatever the request asked for")
    func issuesWhatIsPromised() throws {
        let deviceKey = P256.Signing.PrivateKey()
        let csr = try Self.request(key: Certificate.PrivateKey(deviceKey))
        let certificate = try ca.issue(csrPEM: Self.pem(csr), instanceID: Self.instanceID, now: Self.now)

        #expect(certificate.version == .v3)
        #expect(try certificate.subject == DistinguishedName { CommonName(Self.instanceID) })
        #expect(certificate.issuer == ca.certificate.subject)
        #expect(certificate.publicKey == Certificate.PublicKey(deviceKey.publicKey))
        #expect(certificate.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(ca.certificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(certificate.notValidBefore == Self.now - 300)
        #expect(certificate.notValidAfter == Self.now + 90 * Self.day)

        let serial = certificate.serialNumber.bytes
        #expect(serial.count == 20)
        #expect(serial.first! & 0x80 == 0, "positive")
        #expect(serial.first! != 0, "no leading zero")

        let extensions = certificate.extensions
        #expect(extensions.count == 6)
        #expect(
            try extensions.subjectAlternativeNames == SubjectAlternativeNames([.uniformResourceIdentifier("urn:signet:device:\(Self.instanceID)")]))
        #expect(try extensions.extendedKeyUsage == ExtendedKeyUsage([.clientAuth]))
        #expect(try extensions.keyUsage == KeyUsage(digitalSignature: true))
        #expect(extensions[oid: .X509ExtensionID.keyUsage]?.critical == true)
        #expect(try extensions.basicConstraints == .notCertificateAuthority)
        #expect(extensions[oid: .X509ExtensionID.basicConstraints]?.critical == true)
        #expect(try extensions.authorityKeyIdentifier?.keyIdentifier == ca.certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
        #expect(try extensions.subjectKeyIdentifier == SubjectKeyIdentifier(hash: Certificate.PublicKey(deviceKey.publicKey)))

        #expect(ca.verify(certificate, now: Self.now) == .valid(instanceID: Self.instanceID))
        #expect(DeviceCertificateAuthority.instanceID(of: certificate) == Self.instanceID)
    }

    @Test("PEM and DER requests are both read, and told apart from raw bytes")
    func pemAndDER() throws {
        let csr = try Self.request()
        let fromDER = try ca.issue(csrDER: Self.der(csr), instanceID: Self.instanceID, now: Self.now)
        let fromDERBytes = try ca.issue(csr: Self.der(csr), instanceID: Self.instanceID, now: Self.now)
        let fromPEMBytes = try ca.issue(csr: Array(Self.pem(csr).utf8), instanceID: Self.instanceID, now: Self.now)
        let fromPaddedPEM = try ca.issue(csrPEM: "\n  " + Self.pem(csr) + "\r\n", instanceID: Self.instanceID, now: Self.now)
        for certificate in [fromDER, fromDERBytes, fromPEMBytes, fromPaddedPEM] {
            #expect(certificate.publicKey == csr.publicKey)
            #expect(ca.verify(certificate, now: Self.now).instanceID == Self.instanceID)
        }
    }

    @Test("serials differ from one certificate to the next")
    func serialsDiffer() throws {
        let csr = try Self.der(Self.request())
        let serials = try (0..<20).map { _ in try ca.issue(csrDER: csr, instanceID: Self.instanceID, now: Self.now).serialNumber }
        #expect(Set(serials).count == 20)
    }

    @Test("a device certificate lies within its CA's validity, and a CA outside its own issues nothing")
    func cappedByCA() throws {
        let shortCA = try DeviceCertificateAuthority.make(name: "Short", validity: 30 * Self.day, now: Self.now)
        let csr = try Self.der(Self.request())
        let certificate = try shortCA.issue(csrDER: csr, instanceID: Self.instanceID, now: Self.now + Self.day)
        #expect(certificate.notValidAfter == shortCA.certificate.notValidAfter)
        let custom = try shortCA.issue(csrDER: csr, instanceID: Self.instanceID, validity: 600, now: Self.now)
        #expect(custom.notValidAfter == Self.now + 600)
        expectCode(.invalidConfiguration) { _ = try shortCA.issue(csrDER: csr, instanceID: Self.instanceID, now: Self.now + 31 * Self.day) }
        expectCode(.invalidConfiguration) { _ = try shortCA.issue(csrDER: csr, instanceID: Self.instanceID, validity: 0, now: Self.now) }
        expectCode(.invalidConfiguration) { _ = try shortCA.issue(csrDER: csr, instanceID: Self.instanceID, now: Self.now - 301) }
        // Issued just after the CA was made, the five minutes of skew stop at the CA's own start.
        let early = try shortCA.issue(csrDER: csr, instanceID: Self.instanceID, now: Self.now - 200)
        #expect(early.notValidBefore == shortCA.certificate.notValidBefore)
    }

    @Test("fractions of a second are dropped, so the dates issued are the dates checked")
    func wholeSeconds() throws {
        let certificate = try ca.issue(csrDER: Self.der(Self.request()), instanceID: Self.instanceID, now: Self.now + 0.75)
        #expect(certificate.notValidBefore == Self.now - 300)
        #expect(certificate.notValidAfter == Self.now + 90 * Self.day)
    }

    // MARK: Refusing requests

    @Test("a request whose signature does not prove its key is refused: csr_signature_invalid")
    func signatureMismatch() throws {
        // One byte of the signed part changed: the requested common name "admin" becomes "bdmin".
        var tampered = try Self.der(Self.request())
        let admin = Array("admin".utf8)
        let at = try #require((0...(tampered.count - admin.count)).first { Array(tampered[$0..<($0 + admin.count)]) == admin })
        tampered[at] = UInt8(ascii: "b")
        expectCode(.csrSignatureInvalid) { _ = try ca.issue(csrDER: tampered, instanceID: Self.instanceID, now: Self.now) }

        // A public key that is not the signer's: signed by one key, claiming another.
        let signed = try Self.request()
        let claimed = P256.Signing.PrivateKey().publicKey
        let swapped = try CertificateSigningRequest(
            version: .v1, subject: signed.subject, publicKey: Certificate.PublicKey(claimed), attributes: signed.attributes,
            signatureAlgorithm: signed.signatureAlgorithm, signature: signed.signature
        )
        expectCode(.csrSignatureInvalid) { _ = try ca.issue(csrPEM: Self.pem(swapped), instanceID: Self.instanceID, now: Self.now) }

        // P-256 signing with SHA-384 is valid ECDSA, but a device signs ES256.
        let sha384 = try Self.request(signatureAlgorithm: .ecdsaWithSHA384)
        expectCode(.csrSignatureInvalid) { _ = try ca.issue(csrDER: Self.der(sha384), instanceID: Self.instanceID, now: Self.now) }
    }

    @Test("RSA, P-384, P-521 and Ed25519 keys are refused: unsupported_key")
    func unsupportedKeys() throws {
        let keys: [(Certificate.PrivateKey, Certificate.SignatureAlgorithm)] = [
            (Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048)), .sha256WithRSAEncryption),
            (Certificate.PrivateKey(P384.Signing.PrivateKey()), .ecdsaWithSHA384),
            (Certificate.PrivateKey(P521.Signing.PrivateKey()), .ecdsaWithSHA512),
            (Certificate.PrivateKey(Curve25519.Signing.PrivateKey()), .ed25519),
        ]
        for (key, algorithm) in keys {
            let csr = try Self.request(key: key, signatureAlgorithm: algorithm)
            expectCode(.unsupportedKey) { _ = try ca.issue(csrPEM: Self.pem(csr), instanceID: Self.instanceID, now: Self.now) }
        }
    }

    @Test("garbage, truncated, oversized and mislabelled input is refused: malformed_csr")
    func malformed() throws {
        let der = try Self.der(Self.request())
        let pem = try Self.pem(Self.request())
        let bad: [[UInt8]] = [
            [],
            Array("hello".utf8),
            [0x30],
            Array(der.prefix(der.count / 2)),
            Array(der.dropLast()),
            der + [0x00],
            [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF],
            Array(repeating: 0x30, count: DeviceCertificateAuthority.maximumRequestSize + 1),
            der + Array(repeating: 0, count: DeviceCertificateAuthority.maximumRequestSize),
            [0xFF, 0xFE, 0x00],
        ]
        for bytes in bad {
            expectCode(.malformedCSR) { _ = try ca.issue(csr: bytes, instanceID: Self.instanceID, now: Self.now) }
            expectCode(.malformedCSR) { _ = try ca.issue(csrDER: bytes, instanceID: Self.instanceID, now: Self.now) }
        }
        let badPEM = [
            "",
            "-----BEGIN CERTIFICATE REQUEST-----\nnot base64!\n-----END CERTIFICATE REQUEST-----",
            pem.replacingOccurrences(of: "CERTIFICATE REQUEST", with: "CERTIFICATE"),
            try ca.certificate.serializeAsPEM().pemString,
            String(pem.prefix(pem.count / 2)),
            pem + String(repeating: " ", count: DeviceCertificateAuthority.maximumRequestSize),
        ]
        for text in badPEM {
            expectCode(.malformedCSR) { _ = try ca.issue(csrPEM: text, instanceID: Self.instanceID, now: Self.now) }
        }
    }

    @Test("instance ids that could escape the URI or the name are refused: invalid_instance_id")
    func instanceIDs() throws {
        let csr = try Self.der(Self.request())
        let bad = [
            "../x", "short", "0123456789abcde", "with spaces in it 1234", "colon:in:the:id:123456", "slash/in/the/id/123456",
            "percent%2Fencoded%2F123", "newline\n0123456789abcdef", "ünïcödé-0123456789abc", "0123456789abcdef?query",
            String(repeating: "a", count: 129), "",
        ]
        for id in bad {
            #expect(!DeviceCertificateAuthority.isValidInstanceID(id), "\(id)")
            expectCode(.invalidInstanceID) { _ = try ca.issue(csrDER: csr, instanceID: id, now: Self.now) }
        }
        for id in [String(repeating: "a", count: 16), String(repeating: "Z", count: 128), "AZaz09_-AZaz09_-"] {
            let certificate = try ca.issue(csrDER: csr, instanceID: id, now: Self.now)
            #expect(ca.verify(certificate, now: Self.now) == .valid(instanceID: id))
        }
    }

    // MARK: Verifying

    @Test("verify refuses another CA's certificate, even one of the same name")
    func foreignCA() throws {
        let csr = try Self.der(Self.request())
        let twin = try DeviceCertificateAuthority.make(name: "Test", validity: 365 * Self.day, now: Self.now)
        let other = try DeviceCertificateAuthority.make(name: "Other", validity: 365 * Self.day, now: Self.now)
        #expect(ca.verify(try twin.issue(csrDER: csr, instanceID: Self.instanceID, now: Self.now), now: Self.now) == .invalid(.foreignIssuer))
        #expect(ca.verify(try other.issue(csrDER: csr, instanceID: Self.instanceID, now: Self.now), now: Self.now) == .invalid(.foreignIssuer))
        // Signed by another key under this CA's name.
        let impostor = try forged(signer: P256.Signing.PrivateKey()) {
            try ExtendedKeyUsage([.clientAuth])
            SubjectAlternativeNames([.uniformResourceIdentifier("urn:signet:device:\(Self.instanceID)")])
        }
        #expect(ca.verify(impostor, now: Self.now) == .invalid(.foreignIssuer))
        // This CA's own certificate is no device certificate.
        #expect(ca.verify(ca.certificate, now: Self.now) != .valid(instanceID: Self.instanceID))
        #expect(ca.verify(ca.certificate, now: Self.now).instanceID == nil)
    }

    @Test("verify refuses a certificate before notBefore and after notAfter, and accepts both edges")
    func validityWindow() throws {
        let certificate = try ca.issue(csrDER: Self.der(Self.request()), instanceID: Self.instanceID, now: Self.now)
        #expect(ca.verify(certificate, now: Self.now - 301) == .invalid(.notYetValid))
        #expect(ca.verify(certificate, now: Self.now - 300) == .valid(instanceID: Self.instanceID))
        #expect(ca.verify(certificate, now: Self.now + 90 * Self.day) == .valid(instanceID: Self.instanceID))
        #expect(ca.verify(certificate, now: Self.now + 90 * Self.day + 1) == .invalid(.expired))
        #expect(ca.verify(certificate, now: Self.now + 365 * Self.day) == .invalid(.expired))
    }

    @Test("verify refuses a certificate without clientAuth, or without one well-formed device URI")
    func usagesAndIdentity() throws {
        let uri = GeneralName.uniformResourceIdentifier("urn:signet:device:\(Self.instanceID)")
        let serverOnly = try forged {
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames([uri])
        }
        #expect(ca.verify(serverOnly, now: Self.now) == .invalid(.notForClientAuthentication))
        let noEKU = try forged { SubjectAlternativeNames([uri]) }
        #expect(ca.verify(noEKU, now: Self.now) == .invalid(.notForClientAuthentication))

        let noSAN = try forged { try ExtendedKeyUsage([.clientAuth]) }
        #expect(ca.verify(noSAN, now: Self.now) == .invalid(.noDeviceIdentity))
        let dnsOnly = try forged {
            try ExtendedKeyUsage([.clientAuth])
            SubjectAlternativeNames([.dnsName("device.example")])
        }
        #expect(ca.verify(dnsOnly, now: Self.now) == .invalid(.noDeviceIdentity))
        let twoDevices = try forged {
            try ExtendedKeyUsage([.clientAuth])
            SubjectAlternativeNames([uri, .uniformResourceIdentifier("urn:signet:device:another-device-0123")])
        }
        #expect(ca.verify(twoDevices, now: Self.now) == .invalid(.noDeviceIdentity))
        #expect(DeviceCertificateAuthority.instanceID(of: twoDevices) == nil)
        let badID = try forged {
            try ExtendedKeyUsage([.clientAuth])
            SubjectAlternativeNames([.uniformResourceIdentifier("urn:signet:device:../../etc/passwd")])
        }
        #expect(ca.verify(badID, now: Self.now) == .invalid(.noDeviceIdentity))
        #expect(DeviceCertificateAuthority.instanceID(of: badID) == nil)

        // The same shape with clientAuth and one good URI passes: the refusals above are for what they lack.
        let good = try forged {
            try ExtendedKeyUsage([.clientAuth])
            SubjectAlternativeNames([uri, .dnsName("ignored.example")])
        }
        #expect(ca.verify(good, now: Self.now) == .valid(instanceID: Self.instanceID))
    }

    // MARK: Loading

    @Test("a CA survives the store: PEM out, loaded back, issues certificates the original accepts")
    func loadRoundTrip() throws {
        let loaded = try DeviceCertificateAuthority(privateKeyPEM: ca.privateKeyPEM, certificatePEM: ca.certificatePEM)
        #expect(loaded.certificate == ca.certificate)
        #expect(loaded.fingerprint == ca.fingerprint)
        #expect(loaded.certificatePEM == ca.certificatePEM)
        let certificate = try loaded.issue(csrDER: Self.der(Self.request()), instanceID: Self.instanceID, now: Self.now)
        #expect(ca.verify(certificate, now: Self.now) == .valid(instanceID: Self.instanceID))
        #expect(loaded.verify(certificate, now: Self.now) == .valid(instanceID: Self.instanceID))
        #expect(try certificate.extensions.authorityKeyIdentifier?.keyIdentifier == ca.certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
    }

    @Test("loading refuses a key that is not the certificate's, garbage, and a certificate that is no CA")
    func loadRefusals() throws {
        let other = try DeviceCertificateAuthority.make(name: "Other", validity: Self.day, now: Self.now)
        expectCode(.keyFailure) { _ = try DeviceCertificateAuthority(privateKeyPEM: other.privateKeyPEM, certificatePEM: ca.certificatePEM) }
        expectCode(.keyFailure) { _ = try DeviceCertificateAuthority(privateKeyPEM: "nonsense", certificatePEM: ca.certificatePEM) }
        expectCode(.keyFailure) { _ = try DeviceCertificateAuthority(privateKeyPEM: ca.privateKeyPEM, certificatePEM: "nonsense") }
        let p384 = P384.Signing.PrivateKey().pemRepresentation
        expectCode(.keyFailure) { _ = try DeviceCertificateAuthority(privateKeyPEM: p384, certificatePEM: ca.certificatePEM) }
        // A device certificate with its own key is not a CA.
        let deviceKey = P256.Signing.PrivateKey()
        let device = try ca.issue(csrDER: Self.der(Self.request(key: Certificate.PrivateKey(deviceKey))), instanceID: Self.instanceID, now: Self.now)
        expectCode(.keyFailure) {
            _ = try DeviceCertificateAuthority(privateKeyPEM: deviceKey.pemRepresentation, certificatePEM: DeviceCertificateAuthority.pem(of: device))
        }
    }

    // MARK: Encodings

    @Test("x5t#S256 is the unpadded base64url SHA-256 of the certificate's DER (RFC 8705 §3.1)")
    func thumbprint() throws {
        let certificate = try ca.issue(csrDER: Self.der(Self.request()), instanceID: Self.instanceID, now: Self.now)
        let pem = try DeviceCertificateAuthority.pem(of: certificate)
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: body))
        let expected = Data(SHA256.hash(data: der)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let thumbprint = try DeviceCertificateAuthority.x5tS256(of: certificate)
        #expect(thumbprint == expected)
        #expect(thumbprint.count == 43)
        #expect(try DeviceCertificateAuthority.x5tS256(of: Certificate(pemEncoded: pem)) == thumbprint)
    }

    // MARK: openssl

    @Test("openssl verifies the chain and reads every promised field, from a request openssl made")
    func openssl() throws {
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else {
            print("skipping the openssl check: \(openssl) is not installed")
            return
        }
        let folder = try TestFolder.make("device-ca")
        defer { try? FileManager.default.removeItem(at: folder) }
        func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
            // In the folder (GNU env's --chdir), its output and errors together.
            let result = try ChildProcess.run("/usr/bin/env", ["--chdir", folder.path, openssl] + arguments, errors: .standardOutput)
            return (result.status, result.standardOutput)
        }

        // The device's key and request, made by openssl as a stranger to swift-certificates would.
        let request = try run([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "device.key",
            "-subj", "/CN=ignored", "-out", "device.csr",
        ])
        try #require(request.status == 0, "\(request.output)")
        let csr = try String(contentsOf: folder.appendingPathComponent("device.csr"), encoding: .utf8)

        // The real clock: openssl checks validity against it.
        let now = Date()
        let liveCA = try DeviceCertificateAuthority.make(name: "Test", validity: 365 * Self.day, now: now)
        let certificate = try liveCA.issue(csrPEM: csr, instanceID: Self.instanceID, now: now)
        try liveCA.certificatePEM.write(to: folder.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
        try DeviceCertificateAuthority.pem(of: certificate).write(to: folder.appendingPathComponent("device.pem"), atomically: true, encoding: .utf8)

        let verify = try run(["verify", "-CAfile", "ca.pem", "-purpose", "sslclient", "device.pem"])
        #expect(verify.status == 0)
        #expect(verify.output.contains("device.pem: OK"), "\(verify.output)")

        let text = try run(["x509", "-text", "-noout", "-nameopt", "RFC2253", "-in", "device.pem"])
        #expect(text.status == 0)
        for promised in [
            "TLS Web Client Authentication", "URI:urn:signet:device:\(Self.instanceID)", "Digital Signature", "CA:FALSE",
            "ecdsa-with-SHA256", "Subject: CN=\(Self.instanceID)", "Issuer: CN=Test Device CA,O=Signet", "prime256v1",
        ] {
            #expect(text.output.contains(promised), "missing \(promised)")
        }
        #expect(!text.output.contains("TLS Web Server Authentication"))
        #expect(!text.output.contains("ignored"))

        // The key in the certificate is the one openssl made.
        let fromKey = try run(["pkey", "-in", "device.key", "-pubout"])
        let fromCertificate = try run(["x509", "-in", "device.pem", "-noout", "-pubkey"])
        #expect(fromKey.output == fromCertificate.output)

        let caText = try run(["x509", "-text", "-noout", "-nameopt", "RFC2253", "-in", "ca.pem"])
        for promised in ["CA:TRUE, pathlen:0", "Certificate Sign, CRL Sign", "Subject: CN=Test Device CA,O=Signet"] {
            #expect(caText.output.contains(promised), "missing \(promised)")
        }

        // And openssl refuses the chain under a different CA.
        let strangerCA = try DeviceCertificateAuthority.make(name: "Test", validity: 365 * Self.day, now: now)
        try strangerCA.certificatePEM.write(to: folder.appendingPathComponent("stranger.pem"), atomically: true, encoding: .utf8)
        let refused = try run(["verify", "-CAfile", "stranger.pem", "device.pem"])
        #expect(refused.status != 0)
    }
}
