// `signet serve --dev-tls`: HTTPS on loopback with a certificate made and kept in the data folder.
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import X509

/// A development CA and a server certificate for `127.0.0.1`, `::1` and `localhost`, kept in
/// `<data folder>/dev-tls/`, so mutual TLS (devices) can be tried on one machine without a
/// certificate from anywhere else.
///
/// The CA (`ca.pem`, key `ca.key`) is made once and kept for a year; the commands that play an
/// app (`signet device …`, `signet demo --device`) trust it from `ca.pem`. The server certificate
/// (`server.pem`, `server.key`) is made anew at every start. Keys are written owner-only. This is
/// not for production: there, `--tls-certificate` and `--tls-key` name a real certificate.
public enum DevelopmentTLS {
    /// The files `serve` hands to TLS, and the CA that clients trust.
    public struct Files: Sendable {
        public let caPath: String
        public let certificatePath: String
        public let keyPath: String
    }

    static let caValidity: TimeInterval = 365 * 86_400
    static let serverValidity: TimeInterval = 30 * 86_400

    static func folder(dataDirectory: URL) -> URL { dataDirectory.appendingPathComponent("dev-tls") }

    /// `dev-tls/ca.pem` in the data folder, when a development server has made one.
    public static func caFile(dataDirectory: URL) -> String? {
        let path = folder(dataDirectory: dataDirectory).appendingPathComponent("ca.pem").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// Makes (or reuses) the CA and makes a fresh server certificate signed by it.
    public static func prepare(dataDirectory: URL, now: Date = Date()) throws -> Files {
        let directory = folder(dataDirectory: dataDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let files = Files(
            caPath: directory.appendingPathComponent("ca.pem").path, certificatePath: directory.appendingPathComponent("server.pem").path,
            keyPath: directory.appendingPathComponent("server.key").path)
        let caKeyPath = directory.appendingPathComponent("ca.key").path
        let (caKey, caCertificate) = try loadOrMakeCA(certificatePath: files.caPath, keyPath: caKeyPath, now: now)

        let key = P256.Signing.PrivateKey()
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames([
                .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))),
            ])
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey), notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: min(now.addingTimeInterval(serverValidity), caCertificate.notValidAfter), issuer: caCertificate.subject,
            subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: .init(caKey))
        try write(certificate.serializeAsPEM().pemString + "\n" + caCertificate.serializeAsPEM().pemString + "\n", to: files.certificatePath)
        try writeKey(key, to: files.keyPath)
        return files
    }

    /// The kept CA, or a new one when there is none or it expires within a month.
    private static func loadOrMakeCA(certificatePath: String, keyPath: String, now: Date) throws -> (P256.Signing.PrivateKey, Certificate) {
        if let certificateText = try? String(contentsOfFile: certificatePath, encoding: .utf8),
            let keyText = try? String(contentsOfFile: keyPath, encoding: .utf8),
            let certificate = try? Certificate(pemEncoded: certificateText), let key = try? P256.Signing.PrivateKey(pemRepresentation: keyText),
            certificate.publicKey == Certificate.PublicKey(key.publicKey), certificate.notValidAfter > now.addingTimeInterval(serverValidity)
        {
            return (key, certificate)
        }
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName("Signet")
            CommonName("Signet development TLS CA")
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey), notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: now.addingTimeInterval(caValidity), issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(key))
        try writeKey(key, to: keyPath)
        try write(certificate.serializeAsPEM().pemString + "\n", to: certificatePath)
        return (key, certificate)
    }

    /// A certificate (chain), readable by all.
    private static func write(_ text: String, to path: String) throws {
        let manager = FileManager.default
        try? manager.removeItem(atPath: path)
        guard manager.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o644]) else {
            throw SignetError(.invalidConfiguration, "cannot write \(path)")
        }
    }

    /// A private key, owner-only from its first byte.
    private static func writeKey(_ key: P256.Signing.PrivateKey, to path: String) throws {
        do { try PrivateFile.write(Data((key.pemRepresentation + "\n").utf8), to: path) } catch {
            throw SignetError(.invalidConfiguration, "cannot write \(path): \(error)")
        }
    }
}
