// Liveness and readiness for load balancers and orchestrators: cheap, unauthenticated, no data.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// `GET /health/live` (the process answers) and `GET /health/ready` (the store answers a query
/// at the expected schema version and a signing key is loaded; else `503` with the reason).
struct HealthEndpoints: Sendable {
    let server: ServerContext
    let readiness: any ReadinessStore
    let keyRing: KeyRing

    func live(_ request: Request, context: SignetRequestContext) async throws -> Response {
        JSONResponse.make(Status(status: "live", version: SignetVersion.current, reason: nil))
    }

    func ready(_ request: Request, context: SignetRequestContext) async throws -> Response {
        var reason = await readiness.unreadiness()
        if reason == nil, await !keyRing.hasActiveKey { reason = "no signing key is loaded" }
        guard let reason else { return JSONResponse.make(Status(status: "ready", version: SignetVersion.current, reason: nil)) }
        server.logger.warning("not ready", metadata: ["event": "health.unready", "reason": .string(reason)])
        return JSONResponse.make(Status(status: "unavailable", version: SignetVersion.current, reason: reason), status: .serviceUnavailable)
    }

    private struct Status: Encodable {
        let status: String
        let version: String
        let reason: String?
    }
}
