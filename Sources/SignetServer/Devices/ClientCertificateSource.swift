// Where a request's client certificate comes from: Signet's own TLS, or a trusted proxy's header.
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOSSL
import X509

/// The client certificate a request came with, read, not yet checked.
enum PresentedCertificate: Sendable {
    /// None was presented.
    case none
    case certificate(Certificate)
    /// Something came that is not a certificate (a mangled proxy header).
    case unreadable
}

/// Reads the client certificate of a request.
///
/// With ``header`` set and the TCP peer a trusted proxy, the certificate is the proxy's header
/// (URL-encoded PEM, as nginx's `$ssl_client_escaped_cert`); from any other peer the header is
/// ignored, whatever it holds. Otherwise it is the certificate the client presented in Signet's
/// own TLS handshake (asked for on every connection, never required: see `buildApplication`).
/// Nothing here decides whether the certificate is any good: ``DeviceIdentification`` does.
struct ClientCertificateSource: Sendable {
    /// The proxy's header, e.g. `X-SSL-Client-Cert`.
    let header: HTTPField.Name?
    let forwarded: ForwardedFor

    /// The largest header value read (a P-256 certificate's escaped PEM is about 1 KiB).
    static let maximumHeaderSize = 16 * 1024

    func presented(_ request: Request, context: SignetRequestContext) async -> PresentedCertificate {
        if let header, forwarded.isTrusted(context.peerAddress) {
            let values = request.headers[values: header]
            guard let value = values.first, !value.isEmpty, value != "-" else { return .none }
            guard values.count == 1, value.utf8.count <= Self.maximumHeaderSize, let pem = value.removingPercentEncoding,
                let certificate = try? Certificate(pemEncoded: pem)
            else { return .unreadable }
            return .certificate(certificate)
        }
        // Asked of the connection only here, so requests that need no certificate pay nothing.
        guard let presented = try? await context.channel.nioSSL_peerCertificate().get() else { return .none }
        guard let der = try? presented.toDERBytes(), let certificate = try? Certificate(derEncoded: der) else { return .unreadable }
        return .certificate(certificate)
    }
}
