// SignetClient's transport on AsyncHTTPClient: TLS by SwiftNIO, a client certificate when asked.
import AsyncHTTPClient
import Foundation
import NIOCore
import SignetClient
import SignetCore

/// Sends requests with an AsyncHTTPClient `HTTPClient`, reading at most `maximumResponseSize` bytes.
///
/// It follows no redirect and decompresses nothing. It does not own the client: run it inside
/// ``withTransport(presenting:additionalTrustRoots:timeout:maximumResponseSize:_:)``, which makes
/// a client with the TLS configuration it needs and shuts it down after, or hand it one you shut down.
public struct NIOHTTPTransport: HTTPTransport {
    private let client: HTTPClient
    private let timeout: TimeInterval
    private let maximumResponseSize: Int

    /// - Parameters:
    ///   - client: the client; its owner shuts it down.
    ///   - timeout: seconds per request (default 15).
    ///   - maximumResponseSize: the largest body read (default 1 MiB); a larger one is an error.
    public init(client: HTTPClient, timeout: TimeInterval = 15, maximumResponseSize: Int = 1 << 20) {
        self.client = client
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    /// Runs `body` with a transport whose TLS presents `credential` (none when `nil`) and trusts
    /// the system's roots plus `additionalTrustRoots`, then shuts its `HTTPClient` down, whether
    /// `body` threw or not.
    ///
    /// - Parameters:
    ///   - credential: the device key and chain to present when the server asks for a client certificate.
    ///   - additionalTrustRoots: PEM certificates to trust besides the system's (a development server's CA).
    /// - Throws: ``SignetClient/SignetClientError/Code/deviceKeyUnavailable`` when the key cannot be
    ///   handed to SwiftNIO (a hardware key) or the chain does not parse; `misuse` for a trust root
    ///   that is no PEM certificate; whatever `body` throws.
    public static func withTransport<Result>(
        presenting credential: DeviceCredential?, additionalTrustRoots: [String] = [], timeout: TimeInterval = 15, maximumResponseSize: Int = 1 << 20,
        _ body: (NIOHTTPTransport) async throws -> Result
    ) async throws -> Result {
        let tls = try DeviceTLSConfiguration.client(presenting: credential, additionalTrustRoots: additionalTrustRoots)
        let configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow, decompression: .disabled)
        return try await HTTPClient.withHTTPClient(configuration: configuration) { client in
            try await body(NIOHTTPTransport(client: client, timeout: timeout, maximumResponseSize: maximumResponseSize))
        }
    }

    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), ["https", "http"].contains(scheme), let host = url.host
        else {
            throw SignetError(.invalidConfiguration, "not an http(s) URL: \(request.url)")
        }
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = .init(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: .milliseconds(Int64(timeout * 1000)))
        } catch {
            throw SignetError(.transportFailure, "\(request.method) \(host) failed: \(String(describing: type(of: error)))")
        }
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: maximumResponseSize)
        } catch is NIOTooManyBytesError {
            throw SignetError(.malformedMessage, "the response is larger than \(maximumResponseSize) bytes")
        } catch {
            throw SignetError(.transportFailure, "\(request.method) \(host) failed while reading: \(String(describing: type(of: error)))")
        }
        return HTTPTransportResponse(
            status: Int(response.status.code), headers: response.headers.map { (name: $0.name, value: $0.value) }, body: Data(body.readableBytesView))
    }
}
