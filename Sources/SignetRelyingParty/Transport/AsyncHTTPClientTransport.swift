// HTTPTransport over AsyncHTTPClient, for production use.
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SignetCore

/// An ``HTTPTransport`` that sends requests with AsyncHTTPClient.
///
/// Every request has a deadline and every response body a size limit, so a slow
/// or hostile provider cannot hold a backend's tasks or memory. By default it follows no
/// redirect (``noRedirects``): the provider's endpoints answer with content, and a redirect
/// would carry the client's credentials, a client assertion or a DPoP proof made for one
/// origin to another, and the answer's `DPoP-Nonce` would be kept for the wrong origin.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The client that carries the requests. Default ``noRedirects``.
    public var client: HTTPClient

    /// A client on the shared event loops that follows no redirect; never shut down, as
    /// `HTTPClient.shared` is not.
    public static let noRedirects = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
    /// How long one request may take, connection and body included. Default 10 seconds.
    public var timeout: Duration
    /// The largest response body accepted, in bytes. Default 1 MiB.
    public var maximumResponseSize: Int

    /// A transport over `client` with a deadline and a response size limit.
    ///
    /// - Parameters:
    ///   - client: the AsyncHTTPClient to use; its lifetime is the caller's.
    ///   - timeout: the deadline for each request, from sending to the last body byte.
    ///   - maximumResponseSize: responses with a larger body fail with `transport_failure`.
    public init(client: HTTPClient = AsyncHTTPClientTransport.noRedirects, timeout: Duration = .seconds(10), maximumResponseSize: Int = 1 << 20) {
        self.client = client
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    /// Sends `request`; any failure before a full answer arrives becomes `transport_failure`.
    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        do {
            let response = try await client.execute(outgoing, deadline: deadline)
            let body = try await response.body.collect(upTo: maximumResponseSize)
            return HTTPTransportResponse(
                status: Int(response.status.code),
                headers: response.headers.map { (name: $0.name, value: $0.value) },
                body: Data(body.readableBytesView))
        } catch is NIOTooManyBytesError {
            throw SignetError(.transportFailure, "the response body is larger than \(maximumResponseSize) bytes")
        } catch {
            // The URL is left out: it may carry parameters that are not for logs.
            throw SignetError(.transportFailure, "\(request.method) failed: \(Self.shortDescription(of: error))")
        }
    }

    /// A bounded description of an underlying error, fit for logs.
    private static func shortDescription(of error: any Error) -> String {
        if let error = error as? HTTPClientError { return error.shortDescription }
        return String(String(describing: type(of: error)).prefix(80))
    }
}
