// The PKCS#10 request a device key signs to ask Signet's device CA for its certificate.
import Foundation
import X509

/// Makes the certificate signing request (RFC 2986) for a device key.
///
/// The subject is a placeholder: the device CA names the certificate itself
/// (`urn:signet:device:<instance id>`, from the login the request comes with) and takes only the
/// public key and the proof that the requester holds its private key (the signature).
public enum DeviceCSR {
    /// The subject's CN in every request.
    public static let commonName = "Signet device"

    /// A CSR for `key`, signed by it (ES256), as PEM.
    ///
    /// - Throws: ``SignetClientError/Code/deviceKeyUnavailable`` when the key cannot sign.
    public static func make(for key: any DeviceKey) async throws -> String {
        do {
            let request = try await CertificateSigningRequest(
                version: .v1, subject: try DistinguishedName { CommonName(commonName) }, asyncPrivateKey: key.privateKey,
                attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA256)
            return try request.serializeAsPEM().pemString
        } catch {
            throw SignetClientError(
                .deviceKeyUnavailable, isRetryable: false, reason: "the device key could not sign the certificate request", underlying: error)
        }
    }
}
