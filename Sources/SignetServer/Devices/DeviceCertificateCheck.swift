// Checking a device certificate against the CA that issued it: a decision, not a throw.
import Foundation
import X509

/// What ``DeviceCertificateAuthority/verify(_:now:)`` decided about a certificate.
///
/// Revocation is not part of it: the store decides that, on every device request.
public enum DeviceCertificateCheck: Sendable, Hashable {
    /// Issued by this CA, within its validity, for client authentication, naming this device.
    case valid(instanceID: String)
    /// Not acceptable, and why.
    case invalid(Reason)

    /// Why a certificate was refused; ``label`` is short and bounded, fit for metrics and the audit log.
    public enum Reason: String, Sendable, Hashable, CustomStringConvertible {
        /// Another CA's certificate: the issuer name or the signature is not this CA's.
        case foreignIssuer = "foreign_issuer"
        /// `notBefore` is still to come.
        case notYetValid = "not_yet_valid"
        /// `notAfter` has passed.
        case expired
        /// No extended key usage `clientAuth` (RFC 5280 §4.2.1.12, id-kp-clientAuth).
        case notForClientAuthentication = "not_for_client_authentication"
        /// No single well-formed `urn:signet:device:<instance id>` URI in the subject alternative name.
        case noDeviceIdentity = "no_device_identity"
        /// An extension this check reads could not be decoded.
        case malformedExtension = "malformed_extension"

        public var label: String { rawValue }
        public var description: String { rawValue }
    }

    /// The instance id when valid.
    public var instanceID: String? {
        if case .valid(let instanceID) = self { return instanceID }
        return nil
    }
}

extension DeviceCertificateAuthority {
    /// Checks that `certificate` is a device certificate from this CA, usable now.
    ///
    /// Checks, in order: the issuer name and the ES256 signature are this CA's; `now` lies
    /// within `notBefore…notAfter` (inclusive, RFC 5280 §4.1.2.5); the extended key usage
    /// includes clientAuth; the subject alternative name holds exactly one well-formed device URI.
    /// - Parameters:
    ///   - certificate: the certificate the client presented.
    ///   - now: the current time.
    public func verify(_ certificate: Certificate, now: Date) -> DeviceCertificateCheck {
        Self.verify(certificate, issuedBy: self.certificate, now: now)
    }

    /// ``verify(_:now:)`` with only the CA's certificate: what checking needs, without its key.
    public static func verify(_ certificate: Certificate, issuedBy authority: Certificate, now: Date) -> DeviceCertificateCheck {
        guard certificate.issuer == authority.subject, certificate.signatureAlgorithm == .ecdsaWithSHA256,
            authority.publicKey.isValidSignature(certificate.signature, for: certificate)
        else { return .invalid(.foreignIssuer) }
        if now < certificate.notValidBefore { return .invalid(.notYetValid) }
        if now > certificate.notValidAfter { return .invalid(.expired) }
        let usages: ExtendedKeyUsage?
        do { usages = try certificate.extensions.extendedKeyUsage } catch { return .invalid(.malformedExtension) }
        guard let usages, usages.contains(.clientAuth) else { return .invalid(.notForClientAuthentication) }
        do {
            guard let instanceID = try Self.deviceInstanceID(of: certificate) else { return .invalid(.noDeviceIdentity) }
            return .valid(instanceID: instanceID)
        } catch {
            return .invalid(.malformedExtension)
        }
    }

    /// The instance id a certificate names in its `urn:signet:device:` URI, or `nil` when it names
    /// none, several, or one that is not a valid instance id.
    ///
    /// Reads the certificate only; it says nothing about who issued it (use ``verify(_:now:)``).
    public static func instanceID(of certificate: Certificate) -> String? {
        (try? deviceInstanceID(of: certificate)) ?? nil
    }

    private static func deviceInstanceID(of certificate: Certificate) throws -> String? {
        guard let names = try certificate.extensions.subjectAlternativeNames else { return nil }
        let deviceURIs: [String] = names.compactMap { name in
            guard case .uniformResourceIdentifier(let uri) = name, uri.hasPrefix(deviceURIPrefix) else { return nil }
            return uri
        }
        guard deviceURIs.count == 1, let uri = deviceURIs.first else { return nil }
        let instanceID = String(uri.dropFirst(deviceURIPrefix.count))
        return isValidInstanceID(instanceID) ? instanceID : nil
    }
}
