// The one error shape of Signet's JSON APIs other than OAuth's (RFC 6749 errors stay RFC 6749's).
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore

/// An error of the native login API, the admin API and the other JSON answers that are not OAuth
/// endpoints: `{"error", "error_description", "retryable", "retry_after", "attempts_left",
/// "next_step"}` (``SignetCore/APIErrorBody``; the members after `error_description` only when
/// they apply). `error` is a stable code a client acts on; `Retry-After` goes with `retry_after`.
struct APIError: HTTPResponseError {
    let status: HTTPResponse.Status
    var body: APIErrorBody
    var headers: HTTPFields = [:]

    init(
        _ status: HTTPResponse.Status, _ error: String, _ description: String, retryable: Bool? = nil, retryAfter: TimeInterval? = nil,
        attemptsLeft: Int? = nil, nextStep: LoginStep? = nil
    ) {
        self.status = status
        self.body = APIErrorBody(
            error: error, errorDescription: description, retryable: retryable, retryAfter: retryAfter.map { Int($0.rounded(.up)) },
            attemptsLeft: attemptsLeft, nextStep: nextStep)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse.make(body, status: status)
        if let retryAfter = body.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        for field in headers { response.headers.append(field) }
        return response
    }
}
