// The admin listener: metrics (and health) on an address of its own, never the public port.
import Hummingbird
import Logging
import NIOCore

/// Builds the admin listener: `GET /metrics` in Prometheus format and the health checks.
///
/// It listens on its own address (loopback by default), so the public port never serves metrics;
/// what it shows carries no user ids, secrets or raw paths (``SignetMetrics``).
public func buildAdminApplication(
    metrics: SignetMetrics, store: any SignetStore, keys: KeyRing? = nil, host: String, port: Int, logger: Logger,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = Router()
    router.get("/metrics") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
    }
    router.get("/health/live") { _, _ in Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "live"))) }
    return Application(
        router: router,
        configuration: .init(address: .hostname(host, port: port), serverName: nil),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
        logger: logger)
}
