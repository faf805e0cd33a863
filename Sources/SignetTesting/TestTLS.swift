// Certificates and TLS settings for tests that speak TLS and mutual TLS on loopback.
import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// TLS for tests: a server certificate made on the spot, and client settings that present a device certificate.
public enum TestTLS {
    /// A self-signed P-256 certificate for 127.0.0.1, valid an hour either side of now, written as `tls.crt` and `tls.key` in `folder`.
    public static func serverCertificate(in folder: String) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("127.0.0.1") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(3600), issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]) },
            issuerPrivateKey: .init(key))
        let certificatePath = folder + "/tls.crt", keyPath = folder + "/tls.key"
        try certificate.serializeAsPEM().pemString.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        return (certificatePath, keyPath)
    }

    /// Client settings that accept the test server's self-signed certificate and, when given,
    /// present `chain` (PEM, leaf first) with `key`: a device speaking mutual TLS.
    public static func client(presenting chain: [String] = [], key: P256.Signing.PrivateKey? = nil) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none  // the server's certificate is made by the test
        if let key {
            tls.certificateChain = try chain.map { .certificate(try NIOSSLCertificate(bytes: Array($0.utf8), format: .pem)) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
        }
        return tls
    }
}
