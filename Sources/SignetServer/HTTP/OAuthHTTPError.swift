// OAuth errors as HTTP responses (RFC 6749 §5.2, RFC 6750 §3).
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore

/// An OAuth error to answer with as JSON, with its status and any extra headers.
public struct OAuthHTTPError: HTTPResponseError {
    public let status: HTTPResponse.Status
    public let error: OAuthError
    public let headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ code: OAuthError.Code, _ description: String, headers: HTTPFields = [:]) {
        self.init(status, OAuthError(code, description), headers: headers)
    }

    public init(_ status: HTTPResponse.Status, _ error: OAuthError, headers: HTTPFields = [:]) {
        self.status = status
        self.error = error
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse.make(error, status: status)
        for field in headers { response.headers.append(field) }
        return response
    }

    /// 400 invalid_request.
    public static func invalidRequest(_ description: String) -> Self { .init(.badRequest, .invalidRequest, description) }
    /// 400 invalid_grant.
    public static func invalidGrant(_ description: String) -> Self { .init(.badRequest, .invalidGrant, description) }
}

/// JSON responses that are never cached (RFC 6749 §5.1).
public enum JSONResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A JSON response with `Cache-Control: no-store`.
    public static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, cacheable: Bool = false) -> Response {
        make(value, status: status, cacheable: cacheable, encoder: encoder)
    }

    /// The same for a value written without `Codable` (the token response, ``JSONObjectWritable``).
    public static func make(_ value: some JSONObjectWritable, status: HTTPResponse.Status = .ok, cacheable: Bool = false) -> Response {
        response(ByteBuffer(bytes: value.jsonBytes()), status: status, cacheable: cacheable)
    }

    /// The same, with another encoder (the admin API's ISO 8601 dates).
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, cacheable: Bool = false, encoder: JSONEncoder) -> Response {
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return response(ByteBuffer(bytes: data), status: status, cacheable: cacheable)
    }

    private static func response(_ body: ByteBuffer, status: HTTPResponse.Status, cacheable: Bool) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        headers[.cacheControl] = cacheable ? "public, max-age=300" : "no-store"
        if !cacheable { headers[.pragma] = "no-cache" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }
}
