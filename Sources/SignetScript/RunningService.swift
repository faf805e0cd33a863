// Running a server for the length of a closure: for tests, the benchmark and the demo.
import Logging
import ServiceLifecycle
import SignetCore

/// Runs the service `make` builds while `body` runs, then shuts it down gracefully.
///
/// `make` gets a closure that the service must call with its port once it listens (Hummingbird's
/// `onServerRunning`); `body` starts only then. Errors from `body` are rethrown after shutdown.
///
/// - Parameters:
///   - name: what the service is, for the error when it does not start.
///   - logger: the service group's logger.
public func withRunningService<Result: Sendable>(
    _ name: String,
    logger: Logger,
    make: (_ listening: @escaping @Sendable (Int) async -> Void) async throws -> any Service,
    _ body: (_ port: Int) async throws -> Result
) async throws -> Result {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let service = try await make { port in
        continuation.yield(port)
        continuation.finish()
    }
    let services = ServiceGroup(configuration: .init(services: [service], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            await services.triggerGracefulShutdown()
            throw SignetError(.transportFailure, "\(name) did not start")
        }
        do {
            let result = try await body(port)
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return result
        } catch {
            await services.triggerGracefulShutdown()
            try? await group.waitForAll()
            throw error
        }
    }
}
