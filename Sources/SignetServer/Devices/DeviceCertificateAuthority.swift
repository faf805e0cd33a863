// The device CA: one P-256 key and its self-signed certificate, issuing client certificates to app installations.
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import X509

/// A certificate authority that certifies the keys of app installations.
///
/// Pure and storage-free: it turns a PKCS#10 request (RFC 2986) into an X.509 client
/// certificate (RFC 5280) and checks certificates it issued. Storage, rotation and
/// revocation live elsewhere; the store keeps ``privateKeyPEM`` and ``certificatePEM``
/// and loads them back with ``init(privateKeyPEM:certificatePEM:random:)``.
///
/// Only the device's public key is taken from a request, and only after its signature
/// proves the requester holds the private key. Everything the certificate says — name,
/// URI, usages, validity — is decided here.
public struct DeviceCertificateAuthority: Sendable {
    /// The CA's self-signed certificate, the trust anchor for device certificates.
    public let certificate: Certificate
    /// ``certificate`` in PEM, as published at `/devices/ca.pem` and given to TLS as a trust root.
    public let certificatePEM: String
    /// The CA's private key in PKCS#8 PEM, for the store only. Never log it.
    public let privateKeyPEM: String
    /// SHA-256 of the certificate's DER, lowercase hex: names this CA in logs, records and the CLI.
    public let fingerprint: String

    private let privateKey: P256.Signing.PrivateKey
    private let keyIdentifier: ArraySlice<UInt8>
    private let random: SecureRandom

    /// How long a device certificate is valid unless the caller says otherwise: 90 days.
    public static let defaultValidity: TimeInterval = 90 * 24 * 3600
    /// How far back `notBefore` is set, so a device whose clock runs a little slow accepts its new certificate.
    public static let clockSkew: TimeInterval = 5 * 60
    /// The largest certificate signing request accepted, in bytes of PEM text or DER. A P-256 request is about 300 bytes.
    public static let maximumRequestSize = 8 * 1024
    /// The prefix of the URI naming a device in its certificate's subject alternative name.
    public static let deviceURIPrefix = "urn:signet:device:"
    /// The bounds of an instance id's length.
    public static let instanceIDLength = 16...128

    // MARK: Making and loading

    /// Makes a new CA with a fresh P-256 key.
    ///
    /// The certificate is self-signed (ES256), a CA with path length 0 (it signs device
    /// certificates, never other CAs), for `keyCertSign` and `cRLSign` only, with subject
    /// `CN=<name> Device CA, O=Signet` and a random 20-byte serial.
    /// - Parameters:
    ///   - name: what the CA's common name starts with, e.g. the deployment's name.
    ///   - validity: how long the CA is valid; device certificates never outlive it.
    ///   - now: the current time.
    ///   - random: the source of the serial number.
    public static func make(name: String, validity: TimeInterval, now: Date, random: SecureRandom = SecureRandom()) throws -> Self {
        let commonName = "\(name) Device CA"
        guard !name.isEmpty, commonName.count <= 64, name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw SignetError(.invalidConfiguration, "a device CA's name must be 1 to 54 printable characters")
        }
        guard validity > clockSkew else {
            throw SignetError(.invalidConfiguration, "a device CA must be valid for more than \(Int(clockSkew)) seconds")
        }
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let subject = try DistinguishedName {
            OrganizationName("Signet")
            CommonName(commonName)
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: publicKey)
        }
        let start = wholeSeconds(now)
        let certificate = try Certificate(
            version: .v3,
            serialNumber: serialNumber(random),
            publicKey: publicKey,
            notValidBefore: start - clockSkew,
            notValidAfter: start + validity.rounded(.down),
            issuer: subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        return try DeviceCertificateAuthority(key: key, certificate: certificate, random: random)
    }

    /// Loads a CA the store kept.
    ///
    /// Refuses a key that is not P-256, a certificate that is not a self-signed CA
    /// certificate, and a key that is not the certificate's.
    /// - Parameters:
    ///   - privateKeyPEM: the CA's private key in PEM, as ``privateKeyPEM`` writes it.
    ///   - certificatePEM: the CA's certificate.
    ///   - random: the source of serial numbers.
    public init(privateKeyPEM: String, certificatePEM: String, random: SecureRandom = SecureRandom()) throws {
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM) } catch {
            throw SignetError(.keyFailure, "the device CA's private key is not a P-256 PEM key")
        }
        let certificate: Certificate
        do { certificate = try Certificate(pemEncoded: certificatePEM) } catch {
            throw SignetError(.keyFailure, "the device CA's certificate is not a PEM X.509 certificate")
        }
        try self.init(key: key, certificate: certificate, random: random)
    }

    private init(key: P256.Signing.PrivateKey, certificate: Certificate, random: SecureRandom) throws {
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw SignetError(.keyFailure, "the device CA's private key does not match its certificate")
        }
        guard certificate.issuer == certificate.subject, certificate.publicKey.isValidSignature(certificate.signature, for: certificate) else {
            throw SignetError(.keyFailure, "the device CA's certificate is not self-signed")
        }
        guard case .isCertificateAuthority = try? certificate.extensions.basicConstraints else {
            throw SignetError(.keyFailure, "the device CA's certificate is not a CA certificate")
        }
        self.privateKey = key
        self.certificate = certificate
        self.random = random
        let ski = try? certificate.extensions.subjectKeyIdentifier
        self.keyIdentifier = ski?.keyIdentifier ?? SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier
        do {
            self.certificatePEM = try certificate.serializeAsPEM().pemString
            self.fingerprint = SHA256.hash(data: try Self.derBytes(of: certificate)).hexEncodedString()
        } catch {
            throw SignetError(.keyFailure, "the device CA's certificate cannot be encoded")
        }
        self.privateKeyPEM = key.pemRepresentation
    }

    // MARK: Issuing

    /// Issues a client certificate for the key in a PEM certificate signing request (`CERTIFICATE REQUEST`).
    ///
    /// See ``issue(csrDER:instanceID:validity:now:)``.
    public func issue(csrPEM: String, instanceID: String, validity: TimeInterval = defaultValidity, now: Date) throws -> Certificate {
        try issue(csrDER: Self.csrDER(fromPEM: csrPEM), instanceID: instanceID, validity: validity, now: now)
    }

    /// Issues a client certificate for the key in a certificate signing request, PEM or DER, told apart by its first bytes.
    ///
    /// For bodies that may be either (`application/pkcs10` is DER; many tools write PEM).
    public func issue(csr: some Collection<UInt8>, instanceID: String, validity: TimeInterval = defaultValidity, now: Date) throws -> Certificate {
        try issue(csrDER: Self.csrDER(from: csr), instanceID: instanceID, validity: validity, now: now)
    }

    /// The DER of a certificate signing request given as PEM or DER, told apart by its first bytes.
    public static func csrDER(from csr: some Collection<UInt8>) throws -> [UInt8] {
        guard csr.count <= maximumRequestSize else {
            throw SignetError(.malformedCSR, "the certificate signing request is larger than \(maximumRequestSize) bytes")
        }
        let bytes = Array(csr)
        if bytes.first == 0x30 { return bytes }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SignetError(.malformedCSR, "the certificate signing request is neither DER nor PEM")
        }
        return try csrDER(fromPEM: text)
    }

    /// The DER of a PEM certificate signing request.
    public static func csrDER(fromPEM csrPEM: String) throws -> [UInt8] {
        guard csrPEM.utf8.count <= maximumRequestSize else {
            throw SignetError(.malformedCSR, "the certificate signing request is larger than \(maximumRequestSize) bytes")
        }
        let document: PEMDocument
        do { document = try PEMDocument(pemString: csrPEM.trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
            throw SignetError(.malformedCSR, "the certificate signing request is not PEM")
        }
        guard document.discriminator == "CERTIFICATE REQUEST" || document.discriminator == "NEW CERTIFICATE REQUEST" else {
            throw SignetError(.malformedCSR, "the PEM document is not a CERTIFICATE REQUEST")
        }
        return document.derBytes
    }

    /// Issues a client certificate for the key in a DER certificate signing request.
    ///
    /// The request must be a PKCS#10 v1 request for a P-256 key, signed with ecdsa-with-SHA256
    /// by that key (proof of possession). Its subject and requested extensions are ignored.
    /// The certificate has subject `CN=<instanceID>`, subject alternative name
    /// `URI:urn:signet:device:<instanceID>`, extended key usage clientAuth only, key usage
    /// digitalSignature (critical), basic constraints CA false (critical), the CA's key
    /// identifier and its own, a random 20-byte serial, and is valid from five minutes ago
    /// (clock skew; never before the CA's own `notBefore`) until `now + validity` or the CA's
    /// own expiry, whichever comes first.
    /// - Parameters:
    ///   - csrDER: the request's DER bytes.
    ///   - instanceID: the app installation's id: 16 to 128 characters of `A–Z a–z 0–9 _ -`.
    ///   - validity: how long the certificate is valid, 90 days by default.
    ///   - now: the current time.
    /// - Throws: ``SignetError`` with ``SignetError/Code/malformedCSR``, ``SignetError/Code/csrSignatureInvalid``,
    ///   ``SignetError/Code/unsupportedKey`` or ``SignetError/Code/invalidInstanceID`` for the request's faults;
    ///   ``SignetError/Code/invalidConfiguration`` for a validity under a second, or a CA that is not valid at `now`.
    public func issue(csrDER: some Collection<UInt8>, instanceID: String, validity: TimeInterval = defaultValidity, now: Date) throws -> Certificate {
        guard Self.isValidInstanceID(instanceID) else {
            throw SignetError(
                .invalidInstanceID,
                "an instance id is \(Self.instanceIDLength.lowerBound) to \(Self.instanceIDLength.upperBound) characters of A-Z a-z 0-9 _ -")
        }
        let devicePublicKey = try Self.provenDeviceKey(csrDER: csrDER)
        guard validity >= 1 else { throw SignetError(.invalidConfiguration, "a device certificate's validity must be at least a second") }

        let start = Self.wholeSeconds(now)
        guard start >= certificate.notValidBefore else {
            throw SignetError(.invalidConfiguration, "the device CA is not valid yet; check the clock")
        }
        guard start < certificate.notValidAfter else {
            throw SignetError(.invalidConfiguration, "the device CA has expired; rotate it")
        }
        let notBefore = max(start - Self.clockSkew, certificate.notValidBefore)
        let notAfter = min(start + validity.rounded(.down), certificate.notValidAfter)
        let publicKey = Certificate.PublicKey(devicePublicKey)
        let deviceURI = Self.deviceURIPrefix + instanceID
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
            SubjectAlternativeNames([.uniformResourceIdentifier(deviceURI)])
            AuthorityKeyIdentifier(keyIdentifier: keyIdentifier)
            SubjectKeyIdentifier(hash: publicKey)
        }
        return try Certificate(
            version: .v3,
            serialNumber: Self.serialNumber(random),
            publicKey: publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: certificate.subject,
            subject: try DistinguishedName { CommonName(instanceID) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(privateKey)
        )
    }

    /// Parses a DER request and returns its P-256 key once its signature proves possession.
    public static func provenDeviceKey(csrDER: some Collection<UInt8>) throws -> P256.Signing.PublicKey {
        guard csrDER.count <= maximumRequestSize else {
            throw SignetError(.malformedCSR, "the certificate signing request is larger than \(maximumRequestSize) bytes")
        }
        let csr: CertificateSigningRequest
        do {
            csr = try CertificateSigningRequest(derEncoded: Array(csrDER))
        } catch let error as CertificateError where error.code == .unsupportedPublicKeyAlgorithm {
            throw SignetError(.unsupportedKey, "the certificate signing request's key is not P-256")
        } catch {
            throw SignetError(.malformedCSR, "the certificate signing request is not a DER PKCS#10 request")
        }
        guard csr.version == .v1 else {
            throw SignetError(.malformedCSR, "the certificate signing request is not PKCS#10 version 1")
        }
        guard let key = P256.Signing.PublicKey(csr.publicKey) else {
            throw SignetError(.unsupportedKey, "the certificate signing request's key is \(csr.publicKey), not P-256")
        }
        guard csr.signatureAlgorithm == .ecdsaWithSHA256 else {
            throw SignetError(.csrSignatureInvalid, "the certificate signing request must be signed with ecdsa-with-SHA256")
        }
        guard csr.publicKey.isValidSignature(csr.signature, for: csr) else {
            throw SignetError(.csrSignatureInvalid, "the certificate signing request's signature does not match its key")
        }
        return key
    }

    // MARK: Names and encodings

    /// Whether `instanceID` may name a device: 16 to 128 characters of `A–Z a–z 0–9 _ -`,
    /// so it can stand in a URI and a common name as it is.
    public static func isValidInstanceID(_ instanceID: String) -> Bool {
        instanceIDLength.contains(instanceID.utf8.count)
            && instanceID.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
            }
    }

    /// The DER bytes of a certificate.
    public static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// A certificate in PEM (`CERTIFICATE`).
    public static func pem(of certificate: Certificate) throws -> String {
        try certificate.serializeAsPEM().pemString
    }

    /// The certificate's thumbprint for certificate-bound tokens: `x5t#S256` — RFC 8705 §3.1.
    ///
    /// The base64url (unpadded) SHA-256 of the certificate's DER.
    public static func x5tS256(of certificate: Certificate) throws -> String {
        Data(SHA256.hash(data: try derBytes(of: certificate))).base64URLEncodedString()
    }

    /// A random, positive, 20-byte serial: 158 random bits, RFC 5280 §4.1.2.2's limit of 20 octets.
    ///
    /// The top bit is cleared so the integer is positive without a leading zero byte, and the
    /// next one set so no leading byte is dropped: the serial is always exactly 20 bytes.
    private static func serialNumber(_ random: SecureRandom) -> Certificate.SerialNumber {
        var bytes = random.bytes(20)
        bytes[0] = (bytes[0] & 0x7F) | 0x40
        return Certificate.SerialNumber(bytes: bytes)
    }

    /// X.509 times carry whole seconds; round down so what is issued is what is checked.
    private static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}

extension DeviceCertificateAuthority: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The subject and fingerprint; the private key prints as `****`.
    public var description: String {
        "DeviceCertificateAuthority(subject: \(certificate.subject), fingerprint: \(fingerprint), "
            + "notAfter: \(certificate.notValidAfter.formatted(.iso8601)), privateKey: ****)"
    }
    public var debugDescription: String { description }
    /// Reflection shows only what ``description`` shows.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension SignetError.Code {
    /// A certificate signing request could not be read: not PEM or DER PKCS#10, or too large. Final for that request.
    public static let malformedCSR = Self("malformed_csr")
    /// A certificate signing request's signature does not prove possession of its key. Final for that request.
    public static let csrSignatureInvalid = Self("csr_signature_invalid")
    /// A key of a kind Signet does not certify (device keys are P-256). Final.
    public static let unsupportedKey = Self("unsupported_key")
    /// An instance id that cannot name a device. Final.
    public static let invalidInstanceID = Self("invalid_instance_id")
}
