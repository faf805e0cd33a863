// The provider in-process on a free port, spoken to over real HTTP.
import Foundation
import Logging
import ServiceLifecycle
import SignetCore
import SignetScript
import SignetServer
import SignetStore

/// A running provider for tests: its URL, its store, its clock and an admin to seed it.
public struct TestProvider: Sendable {
    /// The issuer, `http://127.0.0.1:<port>`.
    public let issuer: String
    public let store: any SignetStore
    public let clock: TestClock
    public let admin: SignetAdmin
    public let configuration: SignetConfiguration
    /// Every SMS the provider sent.
    public let outbox: MemoryOutbox
    /// What the provider counted (render with ``SignetMetrics/exposition()``).
    public let metrics: SignetMetrics

    /// `issuer + path`.
    public func url(_ path: String) -> String { issuer + path }
}

/// Runs `body` against a provider listening on a free loopback port, then shuts it down.
///
/// - Parameters:
///   - store: the store (default: a fresh ``MemoryStore``).
///   - tls: serve https with a certificate made for the test (and so mutual TLS for devices);
///     ``ScriptedBrowser``s made inside `body` trust it.
///   - attestationVerifier: judges initial certificates' attestations.
///   - logger: the provider's logger (default: critical only, or `SIGNET_TEST_LOG_LEVEL`).
///   - metrics: where the provider counts.
///   - configure: adjusts the configuration (defaults: bcrypt cost 4 for speed).
public func withTestProvider<Result: Sendable>(
    store: (any SignetStore)? = nil,
    clock: TestClock = TestClock(),
    outbox: MemoryOutbox = MemoryOutbox(),
    tls: Bool = false,
    attestationVerifier: any AttestationVerifier = DevelopmentAttestationVerifier(),
    logger: Logger? = nil,
    metrics: SignetMetrics = SignetMetrics(),
    configure: (inout SignetConfiguration) -> Void = { _ in },
    _ body: (TestProvider) async throws -> Result
) async throws -> Result {
    var configuration = SignetConfiguration(host: "127.0.0.1", port: 0, passwordHashCost: 4)
    configuration.issuerFollowsBoundPort = true
    let tlsFolder = tls ? try TestFolder.make("tls") : nil
    defer { if let tlsFolder { try? FileManager.default.removeItem(at: tlsFolder) } }
    if let tlsFolder {
        let files = try TestTLS.serverCertificate(in: tlsFolder.path)
        configuration.tlsCertificatePath = files.certificate
        configuration.tlsKeyPath = files.key
    }
    configure(&configuration)
    let clientTLS = try TestTLS.client()
    let store = store ?? MemoryStore()
    var defaultLogger = Logger(label: "signet.test")
    defaultLogger.logLevel = ProcessInfo.processInfo.environment["SIGNET_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    let logger = logger ?? defaultLogger
    let bound = BoundIssuer()
    return try await withRunningService("the test provider", logger: logger) { listening in
        try await buildApplication(
            configuration: configuration, store: store, clock: clock.signetClock, logger: logger, messageSender: outbox,
            attestationVerifier: attestationVerifier, boundIssuer: bound, metrics: metrics, onServerRunning: listening)
    } _: { _ in
        guard let issuer = bound.value else { throw SignetError(.transportFailure, "the test provider did not learn its issuer") }
        configuration.issuer = issuer
        let provider = TestProvider(
            issuer: issuer, store: store, clock: clock, admin: SignetAdmin(store: store, passwordHashCost: 4, clock: clock.signetClock),
            configuration: configuration, outbox: outbox, metrics: metrics)
        return try await ScriptedBrowser.$defaultTLS.withValue(clientTLS) { try await body(provider) }
    }
}
