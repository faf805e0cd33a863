// MutualTLSTransportFactory on SwiftNIO: one HTTPClient per scope, shut down after it.
import Foundation
import SignetClient
import SignetCore

/// Presents a software device key's certificate with AsyncHTTPClient (Linux, command-line tools).
///
/// Each ``withTransport(presenting:_:)`` makes its own `HTTPClient`, so no connection made with
/// one certificate is reused with another, and shuts it down when the scope ends.
public struct NIOMutualTLSTransportFactory: MutualTLSTransportFactory {
    /// PEM certificates trusted besides the system's roots (a development server's CA).
    public var additionalTrustRoots: [String]
    /// Seconds per request.
    public var timeout: TimeInterval
    /// The largest response body read.
    public var maximumResponseSize: Int

    public init(additionalTrustRoots: [String] = [], timeout: TimeInterval = 15, maximumResponseSize: Int = 1 << 20) {
        self.additionalTrustRoots = additionalTrustRoots
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    public func withTransport<Result: Sendable>(
        presenting credential: DeviceCredential, _ body: (any HTTPTransport) async throws -> Result
    ) async throws -> Result {
        try await NIOHTTPTransport.withTransport(
            presenting: credential, additionalTrustRoots: additionalTrustRoots, timeout: timeout, maximumResponseSize: maximumResponseSize
        ) { try await body($0) }
    }
}
