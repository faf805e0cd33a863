// The TLS client configuration that presents a device certificate with SwiftNIO.
import NIOSSL
import SignetClient

/// Builds NIOSSL client configurations for the device API.
public enum DeviceTLSConfiguration {
    /// A client configuration (TLS 1.2 at least, the server's certificate and host name verified)
    /// that presents `credential` when the server asks for a client certificate, and trusts the
    /// system's roots plus `additionalTrustRoots` (PEM).
    ///
    /// - Throws: ``SignetClient/SignetClientError/Code/deviceKeyUnavailable`` when the key cannot
    ///   leave its hardware (use the platform's transport) or the chain does not parse; `misuse`
    ///   for a trust root that is no PEM certificate.
    public static func client(presenting credential: DeviceCredential?, additionalTrustRoots: [String] = []) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if !additionalTrustRoots.isEmpty {
            do {
                let roots = try additionalTrustRoots.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
                tls.additionalTrustRoots = [.certificates(roots)]
            } catch {
                throw SignetClientError(.misuse, isRetryable: false, reason: "a trust root is not a PEM certificate", underlying: error)
            }
        }
        guard let credential else { return tls }
        do {
            tls.certificateChain = try credential.certificateChain.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }.map {
                .certificate($0)
            }
        } catch {
            throw SignetClientError(
                .deviceKeyUnavailable, isRetryable: false, reason: "the device certificate chain does not parse", underlying: error)
        }
        do {
            let pem = try credential.key.privateKey.serializeAsPEM().pemString
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(pem.utf8), format: .pem))
        } catch {
            throw SignetClientError(
                .deviceKeyUnavailable, isRetryable: false,
                reason: "the device key cannot be handed to SwiftNIO (a hardware key needs the platform's transport)",
                underlying: error)
        }
        return tls
    }
}
