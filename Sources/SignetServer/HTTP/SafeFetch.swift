// Fetching a URL someone else controls (a client's jwks_uri): no redirects, bounded in size and time.
import AsyncHTTPClient
import Foundation
import NIOCore
import SignetCore

/// How much a fetch of a URL someone else controls may cost the provider.
public struct FetchLimits: Sendable, Equatable {
    /// The largest body accepted, in bytes. Default 64 KiB.
    public var maxBytes: Int
    /// The longest the whole fetch (connection, answer and body) may take, in seconds. Default 5 s.
    public var timeout: TimeInterval

    public init(maxBytes: Int = 64 * 1024, timeout: TimeInterval = 5) {
        self.maxBytes = maxBytes
        self.timeout = timeout
    }
}

/// GETs a URL a client registered, so that the server behind it cannot hurt the provider.
///
/// Redirects are never followed: a registered `https` URL could otherwise send the provider on
/// to an internal address or a plain-`http` one (server-side request forgery), past the checks
/// made at registration. The body is read up to ``FetchLimits/maxBytes`` and no further, so a
/// huge or endless answer cannot fill memory. And the whole exchange, body included, must end
/// within ``FetchLimits/timeout``, so a server that answers slowly or never cannot hold the
/// token request waiting on it (the client's own timeout would end only its side).
public struct SafeFetch: Sendable {
    public let limits: FetchLimits
    private let client: HTTPClient

    public init(limits: FetchLimits = FetchLimits()) {
        self.limits = limits
        self.client = Self.noRedirects
    }

    /// One client for every safe fetch, for the life of the process (as `HTTPClient.shared` is).
    private static let noRedirects = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    /// The body of a `200` answer to `GET url`.
    ///
    /// - Throws: ``SignetCore/SignetError`` `fetch_refused` for a redirect, a body over the limit or
    ///   a fetch over the time limit, with the reason in words; `transport_failure` for any other status
    ///   or a network failure.
    public func get(_ url: String, accept: String) async throws -> Data {
        let (client, limits) = (self.client, self.limits)
        let timeout = TimeAmount.nanoseconds(Int64(limits.timeout * 1_000_000_000))
        let timedOut = SignetError(.fetchRefused, "took longer than \(limits.timeout) seconds")
        return try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask {
                var request = HTTPClientRequest(url: url)
                request.headers.add(name: "Accept", value: accept)
                let response: HTTPClientResponse
                do {
                    response = try await client.execute(request, timeout: timeout)
                } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error) {
                    throw timedOut
                }
                let status = Int(response.status.code)
                if (300..<400).contains(status) {
                    throw SignetError(.fetchRefused, "answered a redirect (\(status)); redirects are not followed")
                }
                guard status == 200 else { throw SignetError(.transportFailure, "answered \(status)") }
                let tooLarge = SignetError(.fetchRefused, "sent more than \(limits.maxBytes) bytes")
                if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > limits.maxBytes { throw tooLarge }
                do {
                    return Data(buffer: try await response.body.collect(upTo: limits.maxBytes))
                } catch is NIOTooManyBytesError {
                    throw tooLarge
                } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout].contains(error) {
                    throw timedOut
                }
            }
            group.addTask {
                try await Task.sleep(for: .nanoseconds(timeout.nanoseconds))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            guard let body = first else { throw timedOut }
            return body
        }
    }
}
