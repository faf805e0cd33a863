// The admin listener: metrics, health and the admin API on an address of its own, never the public port.
import Hummingbird
import Logging
import NIOCore

/// What the admin API needs: the admin, the provider's settings (for key rotation) and the bearer token.
public struct AdminAPIAccess: Sendable {
    public let admin: SignetAdmin
    public let configuration: SignetConfiguration
    /// The admin token (`admin.token`), compared in constant time.
    public let token: String

    public init(admin: SignetAdmin, configuration: SignetConfiguration, token: String) {
        (self.admin, self.configuration, self.token) = (admin, configuration, token)
    }
}

/// Builds the admin listener: `GET /metrics` in Prometheus format, `/health/live`, and — when
/// `api` is given — the admin API under `/admin/` (docs in `/admin/openapi.yaml`).
///
/// It listens on its own address (loopback by default), so the public port never serves metrics
/// or administration; the metrics carry no user ids, secrets or raw paths (``SignetMetrics``).
public func buildAdminApplication(
    metrics: SignetMetrics, api: AdminAPIAccess? = nil, host: String, port: Int, logger: Logger,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = Router()
    router.get("/metrics") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
    }
    router.get("/health/live") { _, _ in
        Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "live")))
    }
    if let api { AdminAPI(admin: api.admin, configuration: api.configuration).register(on: router, token: api.token) }
    return Application(
        router: router,
        configuration: .init(address: .hostname(host, port: port), serverName: nil),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
        logger: logger)
}
