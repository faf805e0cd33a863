// What the provider counts and times, through swift-metrics, exposed in Prometheus format.
import CoreMetrics
import Foundation
import Metrics
import Prometheus
import SignetCore
import Synchronization

/// The provider's metrics (docs/operations.md lists them).
///
/// Each provider owns its registry, so several providers in one process (tests) never mix their
/// figures and nothing bootstraps the process-wide metrics system. Labels carry bounded values
/// only: route templates, status codes, channels, outcomes, grant types, error codes — never a
/// user id, a secret or a raw path; `client_id` only for the first ``maxClientLabels`` clients.
public final class SignetMetrics: Sendable {
    /// The Prometheus registry the admin listener's `/metrics` renders.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Handles already made, by name and labels (the registry would find them too, under a lock of its own and an allocation per look-up).
    private let counters = Mutex<[HandleKey: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[HandleKey: CoreMetrics.Timer]>([:])
    private let clientLabels = Mutex<Set<String>>([])
    /// Distinct `client_id` label values; the rest are counted as `other`.
    public let maxClientLabels: Int

    public init(maxClientLabels: Int = 50) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
        ]
        (self.registry, self.factory, self.maxClientLabels) = (registry, factory, maxClientLabels)
        CoreMetrics.Gauge(label: "signet_build_info", dimensions: [("version", SignetVersion.current)], factory: factory).record(1)
    }

    /// The text `/metrics` answers (Prometheus exposition format 0.0.4).
    public func exposition() -> String { registry.emitToString() }

    // MARK: what is counted

    /// A request answered: its route template (`/devices/{instance_id}`, `NotFound`), method, status and duration.
    func request(route: String, method: String, status: Int, duration: Duration) {
        counter("signet_http_requests_total", [("route", route), ("method", method), ("status", String(status))]).increment()
        timer("signet_http_request_duration_seconds", [("route", route), ("method", method)]).recordNanoseconds(duration.nanoseconds)
    }

    /// A login submission's outcome on a channel (`page`, `native`, `device`).
    func login(channel: String, outcome: LoginMetricOutcome) {
        counter("signet_logins_total", [("channel", channel), ("outcome", outcome.rawValue)]).increment()
    }

    /// An authorization code or token issued: `kind` is `code`, `access_token`, `id_token` or `refresh_token`.
    public func issued(_ kind: String, grantType: String, clientID: String) {
        counter("signet_issued_total", [("kind", kind), ("grant_type", grantType), ("client_id", clientLabel(clientID))]).increment()
    }

    /// A token-endpoint error, by its OAuth error code.
    func tokenError(_ code: String) {
        counter("signet_token_errors_total", [("error", code)]).increment()
    }

    /// An SMS handed to the gateway (`sent`) or not (`failed`).
    func sms(_ result: String) {
        counter("signet_sms_total", [("result", result)]).increment()
    }

    /// A request refused by a failure limit: `kind` names the limit.
    func throttled(_ kind: String) {
        counter("signet_throttle_refusals_total", [("limit", kind)]).increment()
    }

    // MARK: handles

    /// `client_id` as a label: itself for the first `maxClientLabels` clients seen, `other` after.
    func clientLabel(_ clientID: String) -> String {
        clientLabels.withLock { seen in
            if seen.contains(clientID) { return clientID }
            guard seen.count < maxClientLabels else { return "other" }
            seen.insert(clientID)
            return clientID
        }
    }

    private func counter(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Counter {
        Self.cached(counters, HandleKey(name, labels)) { CoreMetrics.Counter(label: name, dimensions: labels, factory: factory) }
    }

    private func timer(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Timer {
        Self.cached(timers, HandleKey(name, labels)) { CoreMetrics.Timer(label: name, dimensions: labels, factory: factory) }
    }

    /// The handle made for `key`, made once.
    private static func cached<Handle>(_ handles: borrowing Mutex<[HandleKey: Handle]>, _ key: HandleKey, make: () -> Handle) -> Handle {
        handles.withLock { made in
            if let handle = made[key] { return handle }
            let handle = make()
            made[key] = handle
            return handle
        }
    }

    /// A handle's name and labels, hashed as they are: joining them into one string cost an
    /// allocation per label on every count (three counts and a timer per token request).
    private struct HandleKey: Hashable {
        let name: String
        let labels: [String]

        init(_ name: String, _ labels: [(String, String)]) {
            self.name = name
            var flat: [String] = []
            flat.reserveCapacity(labels.count * 2)
            for (label, value) in labels {
                flat.append(label)
                flat.append(value)
            }
            self.labels = flat
        }
    }
}

/// A login submission's outcome, as counted.
enum LoginMetricOutcome: String, Sendable {
    case success, wrongPassword = "wrong_password", wrongCode = "wrong_code", locked, throttled, refused
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
