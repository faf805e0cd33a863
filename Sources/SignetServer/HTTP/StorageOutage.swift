// A store that cannot be reached for a while (a database restarting) answers 503, not 500.
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore

/// How an outage of the store is answered: 503 with `Retry-After`, since nothing was done and the
/// same request will work once the database is back (RFC 9110 §15.6.4, §10.2.3).
enum StorageOutage {
    /// Seconds a client is asked to wait.
    static let retryAfter = 5

    static let description = "the provider's database cannot be reached now; try again in a few seconds"

    /// Whether `error` is the store's ``SignetError/Code/storageUnavailable``.
    static func matches(_ error: any Error) -> Bool { (error as? SignetError)?.code == .storageUnavailable }

    /// The OAuth error of an endpoint programs call: `temporarily_unavailable` (RFC 6749 §4.1.2.1).
    static var oauthError: OAuthHTTPError {
        OAuthHTTPError(.serviceUnavailable, .temporarilyUnavailable, description, headers: [.retryAfter: String(retryAfter)])
    }
}

/// Answers an outage of the store anywhere below it (pages, the native login API, the device
/// API) with 503 and `Retry-After`: a short page for browsers, else the JSON error shape of
/// Signet's APIs (`error` `temporarily_unavailable`, `retryable`, `retry_after`). The OAuth
/// endpoints answer it themselves, as OAuth JSON (``OAuthEndpointRules``).
struct StorageOutageMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch  where StorageOutage.matches(error) {
            var headers: HTTPFields = [.retryAfter: String(StorageOutage.retryAfter), .cacheControl: "no-store"]
            let body: String
            if request.headers[.accept]?.contains("text/html") == true {
                headers[.contentType] = "text/html; charset=utf-8"
                body =
                    "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>Try again shortly</title><p>Sign-in is unavailable for a moment. Please try again in a few seconds.</p></html>"
            } else {
                let error = APIError(
                    .serviceUnavailable, "temporarily_unavailable", StorageOutage.description, retryable: true,
                    retryAfter: TimeInterval(StorageOutage.retryAfter))
                return try error.response(from: request, context: context)
            }
            return Response(status: .serviceUnavailable, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
        }
    }
}
