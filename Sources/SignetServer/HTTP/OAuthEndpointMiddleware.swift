// The OAuth endpoints answer every error as OAuth JSON (RFC 6749 §5.2, RFC 6750 §3, RFC 7009 §2.2.1).
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SignetCore

/// Makes every error of the endpoints programs call (`/token`, `/revoke`, `/userinfo`) an
/// OAuth error: `application/json` with an `error` member and `Cache-Control: no-store`.
///
/// Without it, a wrong method, a body that is too large and a failure inside an endpoint
/// would get the framework's empty or plain-text answers, which an OAuth client cannot read.
/// The middleware also applies the rules every such endpoint shares before the endpoint runs
/// (RFC 6749 §3.2, §2.3.1; RFC 7009 §2.1; RFC 6750 §2.2): only the methods it takes (others
/// get 405 with `Allow`), parameters in a form body and never in the query, and a body that is
/// `application/x-www-form-urlencoded` — a JSON body is `400 invalid_request` (the request is
/// wrong, not merely of a type the server could learn), any other type `415`. Pages keep the
/// framework's answers and their own.
struct OAuthEndpointMiddleware<Context: RequestContext>: RouterMiddleware {
    /// What an OAuth endpoint takes.
    struct Endpoint: Sendable {
        /// The methods it answers; `Allow` lists them. HEAD, where listed, is answered as GET
        /// without content.
        var methods: [HTTPRequest.Method]
        /// Whether a POST must carry a form body (`/token`, `/revoke`); otherwise one is optional (`/userinfo`).
        var requiresForm: Bool
        /// Media types taken instead of a form (device activation's certificate request); `nil`: forms only.
        var bodyTypes: Set<String>? = nil
    }

    /// The endpoints by path.
    let endpoints: [String: Endpoint]
    /// The largest body accepted, named in the 413 answer.
    let maxBodySize: Int
    let logger: Logger
    /// Endpoints with a parameter in their path (`/devices/{id}`), by the prefix before it; an exact path wins.
    var prefixedEndpoints: [(prefix: String, endpoint: Endpoint)] = []

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = Self.normalised(request.uri.path)
        guard let endpoint = endpoints[path] ?? prefixedEndpoints.first(where: { path.hasPrefix($0.prefix) })?.endpoint else {
            return try await next(request, context)
        }
        let response: Response
        do {
            try check(request, against: endpoint)
            response = try await next(request, context)
        } catch let refusal as UAFHTTPError {
            // UAF refusals carry more than an OAuth error (the UAF status, the PIN's state).
            response = try refusal.response(from: request, context: context)
        } catch {
            response = try oauthError(for: error).response(from: request, context: context)
        }
        // RFC 9110 §9.3.2: HEAD is answered as GET, status and fields (Content-Length too), with
        // no content, errors included; the server would otherwise write the body after the head.
        return request.method == .head ? response.createHeadResponse() : response
    }

    /// The method, query and content-type rules shared by the OAuth endpoints.
    func check(_ request: Request, against endpoint: Endpoint) throws {
        // A path parameter (`/devices/{instance_id}`) never holds U+0000 either.
        if NULCharacter.isEncoded(inForm: request.uri.path) { throw OAuthHTTPError.invalidRequest(NULCharacter.refusal) }
        guard endpoint.methods.contains(request.method) else {
            let allow = endpoint.methods.map(\.rawValue).joined(separator: ", ")
            throw OAuthHTTPError(.methodNotAllowed, .invalidRequest, "this endpoint takes \(allow) only", headers: [.allow: allow])
        }
        guard request.method == .post else { return }
        if let query = request.uri.query, !query.isEmpty {
            throw OAuthHTTPError.invalidRequest("parameters must be sent in the form body, not the query")
        }
        let contentType = request.headers[.contentType]
        let mediaType = RequestParameters.mediaType(of: contentType)
        if let mediaType, endpoint.bodyTypes?.contains(mediaType) == true { return }
        if let mediaType, mediaType == "application/json" || mediaType.hasSuffix("+json") {
            throw OAuthHTTPError.invalidRequest("the body must be form-encoded (application/x-www-form-urlencoded), not JSON (RFC 6749 section 3.2)")
        }
        if let bodyTypes = endpoint.bodyTypes {
            guard let mediaType, bodyTypes.contains(mediaType) else {
                throw OAuthHTTPError(.unsupportedMediaType, .invalidRequest, "the body must be one of \(bodyTypes.sorted().joined(separator: ", "))")
            }
            return
        }
        if endpoint.requiresForm || contentType != nil, !RequestParameters.isForm(contentType) {
            throw OAuthHTTPError(.unsupportedMediaType, .invalidRequest, "the body must be application/x-www-form-urlencoded")
        }
    }

    /// The OAuth error to answer `error` with.
    func oauthError(for error: any Error) -> OAuthHTTPError {
        switch error {
        case let error as OAuthHTTPError:
            return error
        case let error where StorageOutage.matches(error):
            return StorageOutage.oauthError
        case is NIOTooManyBytesError:
            return OAuthHTTPError(.contentTooLarge, .invalidRequest, "the body is larger than the \(maxBodySize) bytes allowed")
        case let error as HTTPError:
            // The framework's own errors (404 and the like), with their status and headers kept.
            return OAuthHTTPError(error.status, Self.code(for: error.status), error.status.reasonPhrase.lowercased(), headers: error.headers)
        case let error as any HTTPResponseError:
            return OAuthHTTPError(error.status, Self.code(for: error.status), error.status.reasonPhrase.lowercased())
        default:
            logger.error("oauth endpoint failed", metadata: ["event": "oauth.server_error", "error": .string(String(reflecting: type(of: error)))])
            return OAuthHTTPError(.internalServerError, .serverError, "the server could not answer the request; try again later")
        }
    }

    /// invalid_request for a client's mistake, server_error for the server's.
    static func code(for status: HTTPResponse.Status) -> OAuthError.Code {
        status.code >= 500 ? .serverError : .invalidRequest
    }

    /// `path` as the router matches it: empty segments (`//token`, `/token/`) collapsed.
    static func normalised(_ path: String) -> String {
        // Most paths are already normal, which bytes tell at once; splitting the String walks
        // grapheme clusters, a visible cost on every request.
        let slash = UInt8(ascii: "/")
        let bytes = path.utf8
        let alreadyNormal =
            bytes.first == slash && (bytes.count == 1 || bytes.last != slash) && !zip(bytes, bytes.dropFirst()).contains { $0 == slash && $1 == slash }
        if alreadyNormal { return path }
        // By Characters here, as the router splits: a `/` with a combining mark after it is one
        // Character and no separator to the router, so it must not be one to these rules either.
        return "/" + path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
    }
}
