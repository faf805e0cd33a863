// One log line and the metrics of each request, under a request id the response echoes.
import Foundation
import HTTPTypes
import Hummingbird
import Instrumentation
import Logging
import SignetCore
import Synchronization
import Tracing
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
/// response, logs one line when the request is answered, counts it in the metrics, and makes it a
/// span for whatever tracer the process bootstraps (none by default: then spans cost nothing).
///
/// The span is written here rather than with Hummingbird's tracing middleware, which records the
/// query string (with only the parameters named to it redacted, by their raw, undecoded names):
/// this span has the method, the route template and the status, nothing a request sent.
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
        // W3C Trace Context from the caller, through whatever instrument is bootstrapped.
        var traceContext = InstrumentationContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &traceContext, using: HeaderExtractor())
        return try await withSpan("HTTP \(request.method.rawValue)", context: traceContext, ofKind: .server) { span in
            try await answer(request, context: context, span: span, next: next)
        }
    }

    private func answer(_ request: Request, context: Context, span: any Span, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        var context = context
        context.requestID = requestID(of: request, context: context)
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            logger.error(
                "request failed", metadata: ["request_id": .string(context.requestID), "error": .string(String(describing: type(of: error)))])
            response = Response(status: .internalServerError)
        }
        response.headers[.xRequestID] = context.requestID
        let duration = ContinuousClock.now - start
        let route = context.endpointPath ?? "NotFound"
        span.operationName = "\(request.method.rawValue) \(route)"
        span.attributes["http.request.method"] = request.method.rawValue
        span.attributes["http.route"] = route
        span.attributes["http.response.status_code"] = Int(response.status.code)
        if response.status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
        metrics.request(route: route, method: request.method.rawValue, status: response.status.code, duration: duration)
        // The line's fields are built only when it will be written.
        guard logger.logLevel <= .info else { return response }
        var metadata: Logger.Metadata = [
            "request_id": .string(context.requestID), "method": .string(request.method.rawValue), "route": .string(route),
            "status": .stringConvertible(response.status.code),
            "duration_ms": .stringConvertible((Double(duration.nanoseconds) / 1e4).rounded() / 100),
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
            given.utf8.allSatisfy({
                $0 < 0x80 && (Character(UnicodeScalar($0)).isLetter || Character(UnicodeScalar($0)).isNumber || "-_.:".utf8.contains($0))
            })
        {
            return given
        }
        return Self.newID()
    }

    /// 16 random bytes as hex (not a secret: it only ties log lines together).
    static func newID() -> String { SecureRandom().bytes(16).hexEncodedString() }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-Id")!
    static let traceparent = Self("traceparent")!
}

/// Reads trace headers (`traceparent`, `tracestate`) for the instrument.
private struct HeaderExtractor: Extractor {
    func extract(key: String, from headers: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { headers[$0] }
    }
}
