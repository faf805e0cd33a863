// What every component shares: where the provider is, the time, randomness, the log and counters.
import Foundation
import Logging
import SignetCore
import SignetStore
import Synchronization

/// The few things every component of the provider may use, and nothing else.
///
/// Stores, settings and other components are not here: each component's initialiser names the
/// narrow store protocols and settings it uses, and ``buildApplication`` builds it once.
public struct ServerContext: Sendable {
    /// The configured issuer, or the bound address once known (``BoundIssuer``).
    private let configuredIssuer: String
    private let boundIssuer: BoundIssuer
    /// The time source; tests pass a fixed clock.
    public let clock: SignetClock
    /// Where tokens, codes and ids come from.
    public let random: SecureRandom
    /// The log; nothing secret is ever written to it (docs/logging.md).
    public let logger: Logger
    /// Requests, logins and tokens counted for `/metrics`.
    public let metrics: SignetMetrics

    public init(
        issuer: String, boundIssuer: BoundIssuer = BoundIssuer(), clock: SignetClock = .system, random: SecureRandom = SecureRandom(),
        logger: Logger = Logger(label: "signet"), metrics: SignetMetrics = SignetMetrics()
    ) {
        self.configuredIssuer = issuer
        self.boundIssuer = boundIssuer
        self.clock = clock
        self.random = random
        self.logger = logger
        self.metrics = metrics
    }

    /// The issuer URL: the configured one, or the bound address when the configuration asks for that.
    public var issuer: String { boundIssuer.value ?? configuredIssuer }

    /// An endpoint URL under the issuer.
    public func endpoint(_ path: String) -> String { issuer + path }

    /// The current time.
    public func now() -> Date { clock.now() }
}

/// The issuer learned once the server has bound its port, for servers started on port 0.
public final class BoundIssuer: Sendable {
    private let storage = Mutex<String?>(nil)
    public init() {}
    /// The issuer, once known.
    public var value: String? { storage.withLock { $0 } }
    func set(_ issuer: String) { storage.withLock { $0 = issuer } }
}
