// A device key with the certificate chain Signet's device CA issued for it.
import Foundation
import X509

/// The device key and its certificate chain: what the app presents over mutual TLS.
///
/// Made only from a chain whose leaf parses and names the key (its public key is the key's), so
/// a key store can never hand out a certificate another key would have to sign for.
public struct DeviceCredential: Sendable, CustomStringConvertible {
    /// The URI scheme prefix device certificates name the installation with (CN and SAN URI).
    public static let instanceURIPrefix = "urn:signet:device:"

    /// The device key.
    public let key: any DeviceKey
    /// The certificate chain as issued, PEM, leaf first.
    public let certificateChain: [String]
    /// The leaf: the device certificate.
    public let certificate: Certificate

    /// - Throws: ``SignetClientError/Code/deviceKeyUnavailable`` when the chain is empty, its leaf
    ///   is no certificate, or the leaf certifies another key.
    public init(key: any DeviceKey, certificateChain: [String]) throws {
        guard let leaf = certificateChain.first else {
            throw SignetClientError(.deviceKeyUnavailable, isRetryable: false, reason: "the certificate chain is empty")
        }
        let certificate: Certificate
        do { certificate = try Certificate(pemEncoded: leaf) } catch {
            throw SignetClientError(
                .deviceKeyUnavailable, isRetryable: false, reason: "the device certificate is not a PEM certificate", underlying: error)
        }
        guard certificate.publicKey == key.privateKey.publicKey else {
            throw SignetClientError(.deviceKeyUnavailable, isRetryable: false, reason: "the device certificate names another key")
        }
        self.key = key
        self.certificateChain = certificateChain
        self.certificate = certificate
    }

    /// The instance id the certificate names (`urn:signet:device:<instance id>` in its SAN URI,
    /// else its CN), or `nil` when it names none.
    public var instanceID: String? {
        let names = (try? certificate.extensions.subjectAlternativeNames).map { Array($0) } ?? []
        let uris = names.compactMap { name -> String? in
            if case .uniformResourceIdentifier(let uri) = name { return uri }
            return nil
        }
        let commonNames = certificate.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }.compactMap { String($0.value) }
        for candidate in uris + commonNames where candidate.hasPrefix(Self.instanceURIPrefix) {
            let id = candidate.dropFirst(Self.instanceURIPrefix.count)
            if !id.isEmpty { return String(id) }
        }
        return nil
    }

    /// When the device certificate expires (its notAfter).
    public var notValidAfter: Date { certificate.notValidAfter }

    /// Whether the certificate is an initial one (valid an hour at most, as the provider issues
    /// them): its key is certified again at activation; a device certificate's key never is.
    public var isInitialCertificate: Bool { certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore) <= 3600 + 600 }

    /// The certificate's serial number, lowercase hex, as the provider's records and
    /// `/devices/certificate-status?serial=` write it.
    public var serialNumber: String { certificate.serialNumber.bytes.hexEncodedString() }

    public var description: String { "DeviceCredential(instance: \(instanceID ?? "none"), serial: \(serialNumber), key: ****)" }
}
