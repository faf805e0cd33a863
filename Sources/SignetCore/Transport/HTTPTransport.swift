// The one way Signet's clients (the relying-party kit and the app SDK) talk to the network.
import Foundation

/// Sends one HTTP request and returns the whole response.
///
/// Every network exchange of the relying-party kit and of the app SDK goes through this
/// protocol, so tests can script a provider in memory and deployments can wrap the real
/// transport with retries, logging or metrics. Implementations throw
/// ``SignetError`` with code ``SignetError/Code/transportFailure``
/// when no answer arrived; an answer with any status code is returned, not thrown.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the provider's answer, whatever its status.
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse
}

/// An HTTP request as Signet's clients build it.
///
/// Deliberately small: a method, an absolute URL, headers in order and an
/// optional body, so any HTTP client can carry it.
public struct HTTPTransportRequest: Sendable {
    /// The method, e.g. `GET` or `POST`.
    public var method: String
    /// The absolute URL, query included.
    public var url: String
    /// Header fields in the order they are sent; names are case-insensitive.
    public var headers: [(name: String, value: String)]
    /// The body, if any.
    public var body: Data?

    /// A request with the given parts.
    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// An HTTP response, read in full.
///
/// Transports bound the body's size, so holding it in memory is safe.
public struct HTTPTransportResponse: Sendable {
    /// The status code, e.g. 200.
    public var status: Int
    /// Header fields in the order they arrived.
    public var headers: [(name: String, value: String)]
    /// The body; empty when there was none.
    public var body: Data

    /// A response with the given parts.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}
