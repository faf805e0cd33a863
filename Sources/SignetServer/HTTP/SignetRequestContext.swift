// The per-request context: Hummingbird's core storage plus the peer's address.
import Hummingbird
import NIOCore

/// The request context of every Signet route.
public struct SignetRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer, for per-address throttling.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The peer's IP address as text, or `unknown`.
    public var sourceAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}
