// One log line and the metrics of each request, under a request id the response echoes.
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization
import W3CTraceContext

/// What a handler learns about a request that its log line should carry (the client, once
/// authenticated or named). A reference, because the context reaches handlers by value.
public final class RequestFacts: Sendable {
    private let client = Mutex<String?>(nil)

    public init() {}

    /// The `client_id` the request was made for, once known.
    public var clientID: String? {
        get { client.withLock { $0 } }
        set { client.withLock { $0 = newValue } }
    }
}

/// Gives each request an id (a trusted proxy's `X-Request-Id`, else a new one), echoes it in the
/// response, logs one line when the request is answered and counts it in the metrics.
///
/// The line has the time, the request id, the method, the route template (never the raw path or
/// query: they can carry codes and tokens), the status, the duration, the client id when known and
/// the client address as resolved through trusted proxies.
struct RequestTelemetryMiddleware: RouterMiddleware {
    typealias Context = SignetRequestContext
    let logger: Logger
    let metrics: SignetMetrics
    let forwarded: ForwardedFor

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        context.requestID = requestID(of: request, context: context)
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            logger.error("request failed", metadata: ["request_id": .string(context.requestID), "error": .string(String(describing: type(of: error)))])
            response = Response(status: .internalServerError)
        }
        response.headers[.xRequestID] = context.requestID
        let duration = ContinuousClock.now - start
        let route = context.endpointPath ?? "NotFound"
        metrics.request(route: route, method: request.method.rawValue, status: response.status.code, duration: duration)
        var metadata: Logger.Metadata = [
            "request_id": .string(context.requestID), "method": .string(request.method.rawValue), "route": .string(route),
            "status": .stringConvertible(response.status.code), "duration_ms": .stringConvertible((Double(duration.nanoseconds) / 1e4).rounded() / 100),
            "client_address": .string(context.sourceAddress),
        ]
        if let clientID = context.facts.clientID { metadata["client_id"] = .string(clientID) }
        // W3C Trace Context: a caller's trace continues in the log line (and in spans, when a tracer is bootstrapped).
        if let header = request.headers[.traceparent], let trace = try? TraceContext(traceParentHeaderValue: header) {
            metadata["trace_id"] = .string(trace.traceID.description)
            metadata["parent_span_id"] = .string(trace.spanID.description)
        }
        logger.info("request", metadata: metadata)
        return response
    }

    /// A trusted proxy's id when it is short and plain; otherwise a new random one.
    private func requestID(of request: Request, context: Context) -> String {
        if let given = request.headers[.xRequestID], forwarded.isTrusted(context.peerAddress), (1...128).contains(given.utf8.count),
            given.utf8.allSatisfy({ $0 < 0x80 && (Character(UnicodeScalar($0)).isLetter || Character(UnicodeScalar($0)).isNumber || "-_.:".utf8.contains($0)) })
        {
            return given
        }
        return Self.newID()
    }

    /// 16 random bytes as hex (not a secret: it only ties log lines together).
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next(), low = generator.next() as UInt64
        return String(high, radix: 16).leftPadded(16) + String(low, radix: 16).leftPadded(16)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-Id")!
    static let traceparent = Self("traceparent")!
}

extension RequestTelemetryMiddleware {
    /// The query parameters a span never records: everything OAuth, OpenID Connect, DPoP or the
    /// native login sends that is a credential, a one-time value or names a person.
    static let redactedQueryParameters: Set<String> = [
        "code", "state", "nonce", "code_challenge", "code_verifier", "request", "request_uri", "id_token_hint", "login_hint",
        "access_token", "refresh_token", "token", "client_secret", "client_assertion", "assertion", "username", "password", "serial",
        "login_session", "sms_code", "session_state", "iss", "dpop_jkt", "ui_locales", "claims", "remember_token",
    ]
}
