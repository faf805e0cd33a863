// Transports that present the device certificate in the TLS handshake (RFC 8705 mutual TLS).
import SignetCore

/// Makes ``SignetCore/HTTPTransport``s that present a device certificate: the device
/// endpoints (`/devices/status`, reactivation, deactivation) know the device by the
/// certificate its TLS handshake proved, and tokens obtained over one are bound to it (RFC 8705).
///
/// Scoped rather than returned, so a transport that owns connections (SwiftNIO's
/// `HTTPClient`, a `URLSession`) is always shut down, and a replaced certificate is never
/// presented again over a connection kept from before.
///
/// `SignetClientNIO`'s `NIOMutualTLSTransportFactory` (Linux, command-line tools, software keys)
/// and ``URLSessionMutualTLSTransportFactory`` (Apple platforms, keys in the Keychain) implement it.
public protocol MutualTLSTransportFactory: Sendable {
    /// Runs `body` with a transport presenting `credential`, and closes the transport after.
    ///
    /// - Throws: ``SignetClientError/Code/deviceKeyUnavailable`` when this factory cannot present
    ///   the credential's key (a hardware key to a software TLS stack); whatever `body` throws.
    func withTransport<Result: Sendable>(
        presenting credential: DeviceCredential, _ body: (any HTTPTransport) async throws -> Result
    ) async throws -> Result
}
