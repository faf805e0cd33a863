// The per-request context: Hummingbird's core storage plus the client's address.
import HTTPTypes
import Hummingbird
import NIOCore

/// The request context of every Signet route.
public struct SignetRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer.
    public let remoteAddress: SocketAddress?
    /// The connection, asked for its TLS client certificate only by the requests that need one.
    public let channel: any Channel
    /// The client's address as resolved through trusted proxies (``ClientAddressMiddleware``).
    public var clientAddress: String?
    /// The request's id in logs and the `X-Request-Id` answer (``RequestTelemetryMiddleware``).
    public var requestID: String = ""
    /// What handlers learn about the request for its log line.
    public let facts = RequestFacts()

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }

    /// The TCP peer's IP address as text, or `unknown`.
    public var peerAddress: String { remoteAddress?.ipAddress ?? "unknown" }

    /// The client's address, for per-address throttling: through trusted proxies, else the peer.
    public var sourceAddress: String { clientAddress ?? peerAddress }
}

/// Resolves the client address once per request (see ``ForwardedFor``).
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = SignetRequestContext
    let forwarded: ForwardedFor

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if !forwarded.trustedProxies.isEmpty {
            let name: HTTPField.Name = forwarded.header == .forwarded ? .forwarded : .xForwardedFor
            context.clientAddress = forwarded.clientAddress(peer: context.peerAddress, headerValues: request.headers[values: name])
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let forwarded = Self("Forwarded")!
    static let xForwardedFor = Self("X-Forwarded-For")!
}
