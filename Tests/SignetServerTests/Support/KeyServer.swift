// A client's key server that misbehaves on purpose, in-process on a free loopback port.
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SignetCore
import Synchronization

/// Serves a client's JWKS at `/jwks` and misbehaves elsewhere:
///
/// - `/redirect` answers 302 to `/jwks`;
/// - `/huge` streams a megabyte with no `Content-Length`, `/huge-declared` announces one;
/// - `/hang` never answers; `/slow-body` sends its head and a few bytes, then nothing.
///
/// Hanging handlers wait until the server is stopped, so the tests never sleep.
final class KeyServer: Sendable {
    private let address = Mutex("")
    private let hits = Mutex<[String: Int]>([:])
    private let released = Mutex(false)

    private init() {}

    /// `http://127.0.0.1:<port>`.
    var base: String { address.withLock { $0 } }

    /// How often `path` was asked for.
    func hits(_ path: String) -> Int { hits.withLock { $0[path] ?? 0 } }

    private func count(_ path: String) { hits.withLock { $0[path, default: 0] += 1 } }

    /// Waits until the server is stopped (at most a minute).
    private func waitForRelease() async {
        var waited = 0
        while !released.withLock({ $0 }), waited < 1200 {
            try? await Task.sleep(for: .milliseconds(50))
            waited += 1
        }
    }

    private func release() { released.withLock { $0 = true } }

    /// Runs `body` with a key server publishing `jwks` (a JWK set's JSON), then stops it.
    static func with<Result: Sendable>(jwks: String, _ body: (KeyServer) async throws -> Result) async throws -> Result {
        let server = KeyServer()
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)

        let router = Router()
        router.get("/jwks") { _, _ in
            server.count("/jwks")
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: jwks)))
        }
        router.get("/redirect") { _, _ in
            server.count("/redirect")
            return Response(status: .found, headers: [.location: server.base + "/jwks"])
        }
        router.get("/huge") { _, _ in
            server.count("/huge")
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody { writer in
                    let chunk = ByteBuffer(repeating: UInt8(ascii: " "), count: 16 * 1024)
                    for _ in 0..<64 { try await writer.write(chunk) }
                    try await writer.finish(nil)
                })
        }
        router.get("/huge-declared") { _, _ in
            server.count("/huge-declared")
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(contentLength: 1 << 20) { writer in
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: " "), count: 1 << 20))
                    try await writer.finish(nil)
                })
        }
        router.get("/hang") { _, _ in
            server.count("/hang")
            await server.waitForRelease()
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: jwks)))
        }
        router.get("/slow-body") { _, _ in
            server.count("/slow-body")
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: #"{"keys":["#))
                    await server.waitForRelease()
                    try await writer.finish(nil)
                })
        }

        var logger = Logger(label: "signet.test.keyserver")
        logger.logLevel = .critical
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            }, logger: logger)
        let services = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw SignetError(.transportFailure, "the key server did not start") }
            server.address.withLock { $0 = "http://127.0.0.1:\(port)" }
            defer { server.release() }
            do {
                let result = try await body(server)
                server.release()
                await services.triggerGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                server.release()
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
        }
    }
}
