// The SDK's default transport: URLSession (FoundationNetworking on Linux).
import Foundation
import SignetCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests with `URLSession`, reading at most `maximumResponseSize` bytes.
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let timeout: TimeInterval
    private let maximumResponseSize: Int

    /// - Parameters:
    ///   - session: the session; by default an ephemeral one that stores no cookies or cache.
    ///   - timeout: seconds per request (default 15).
    public init(session: URLSession? = nil, timeout: TimeInterval = 15, maximumResponseSize: Int = 1 << 20) {
        self.session = session ?? URLSession(configuration: .ephemeral)
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        guard let url = URL(string: request.url) else { throw SignetError(.invalidConfiguration, "not a URL: \(request.url)") }
        var urlRequest = URLRequest(url: url, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch {
            throw SignetError(.transportFailure, "\(request.method) \(url.host ?? "") failed: \(String(describing: type(of: error)))")
        }
        guard let http = response as? HTTPURLResponse else { throw SignetError(.transportFailure, "not an HTTP response") }
        guard data.count <= maximumResponseSize else {
            throw SignetError(.malformedMessage, "the response is larger than \(maximumResponseSize) bytes")
        }
        let headers = http.allHeaderFields.compactMap { key, value -> (name: String, value: String)? in
            guard let name = key as? String else { return nil }
            return (name, String(describing: value))
        }
        return HTTPTransportResponse(status: http.statusCode, headers: headers, body: data)
    }
}
