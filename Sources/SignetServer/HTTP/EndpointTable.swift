// Routes every declared endpoint and derives, per path, what the framework would otherwise
// answer in its own way: 405 with Allow for other methods, and the OAuth rules of the OAuth ones.
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SignetCore

/// Every endpoint of the provider, routed in one place.
struct EndpointTable: Sendable {
    let endpoints: [Endpoint]
    /// The largest body accepted, named in a 413 answer.
    let maxBodySize: Int
    let logger: Logger

    /// Every GET endpoint also answers HEAD (``Endpoint/head``) unless it declares its own, or its
    /// GET changes what is stored (``Endpoint/changesState``).
    init(_ groups: [any EndpointGroup], maxBodySize: Int, logger: Logger) {
        let declared = groups.flatMap(\.endpoints)
        let heads = declared.filter { endpoint in
            endpoint.method == .get && !endpoint.changesState && !declared.contains { $0.method == .head && $0.path == endpoint.path }
        }
        endpoints = declared + heads.map(\.head)
        (self.maxBodySize, self.logger) = (maxBodySize, logger)
    }

    /// The methods a wrong one is checked against, in the order `Allow` lists them.
    static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    func register(on router: Router<SignetRequestContext>) {
        let rules = OAuthEndpointRules(maxBodySize: maxBodySize, logger: logger)
        var paths: [String] = []
        var byPath: [String: [Endpoint]] = [:]
        for endpoint in endpoints {
            if byPath[endpoint.path] == nil { paths.append(endpoint.path) }
            byPath[endpoint.path, default: []].append(endpoint)
        }
        for path in paths {
            let declared = byPath[path] ?? []
            let allow = Self.methods.filter { method in declared.contains { $0.method == method } }.map(\.rawValue).joined(separator: ", ")
            for endpoint in declared {
                router.on(RouterPath(path), method: endpoint.method) { request, context in
                    switch endpoint.dialect {
                    case .oauth: return try await rules.answer(request, context: context, endpoint: endpoint)
                    case .api, .page: return try await endpoint.handler(request, context)
                    }
                }
            }
            let dialect = declared.first?.dialect ?? .page
            for method in Self.methods where !declared.contains(where: { $0.method == method }) {
                router.on(RouterPath(path), method: method) { request, context in
                    try Self.methodNotAllowed(allow: allow, dialect: dialect, request: request, context: context)
                }
            }
        }
    }

    /// 405 with `Allow`, in the path's dialect.
    static func methodNotAllowed(allow: String, dialect: Endpoint.Dialect, request: Request, context: SignetRequestContext) throws -> Response {
        switch dialect {
        case .oauth:
            let error = OAuthHTTPError(.methodNotAllowed, .invalidRequest, "this endpoint takes \(allow) only", headers: [.allow: allow])
            let response = try error.response(from: request, context: context)
            return request.method == .head ? response.createHeadResponse() : response
        case .api:
            var error = APIError(.methodNotAllowed, "invalid_request", "this endpoint takes \(allow) only", retryable: false)
            error.headers = [.allow: allow]
            let response = try error.response(from: request, context: context)
            return request.method == .head ? response.createHeadResponse() : response
        case .page:
            return Response(status: .methodNotAllowed, headers: [.allow: allow])
        }
    }
}

/// The rules every OAuth endpoint shares (RFC 6749 §3.2, §2.3.1; RFC 7009 §2.1; RFC 6750 §2.2),
/// and its errors as OAuth JSON: `application/json` with an `error` member and `Cache-Control:
/// no-store`. Without it, a body that is too large or a failure inside an endpoint would get the
/// framework's empty or plain-text answers, which an OAuth client cannot read.
///
/// Parameters come in a form body and never in the query; the body is
/// `application/x-www-form-urlencoded` (or one of the endpoint's media types): a JSON body is
/// `400 invalid_request` (the request is wrong, not merely of a type the server could learn), any
/// other type `415`.
struct OAuthEndpointRules: Sendable {
    /// The largest body accepted, named in the 413 answer.
    let maxBodySize: Int
    let logger: Logger

    func answer(_ request: Request, context: SignetRequestContext, endpoint: Endpoint) async throws -> Response {
        let response: Response
        do {
            try check(request, against: endpoint)
            response = try await endpoint.handler(request, context)
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

    /// The query and content-type rules of the endpoint's body.
    func check(_ request: Request, against endpoint: Endpoint) throws {
        // A path parameter (`/devices/{instance_id}`) never holds U+0000 either.
        if NULCharacter.isEncoded(inForm: request.uri.path) { throw OAuthHTTPError.invalidRequest(NULCharacter.refusal) }
        guard request.method == .post else { return }
        if let query = request.uri.query, !query.isEmpty {
            throw OAuthHTTPError.invalidRequest("parameters must be sent in the form body, not the query")
        }
        let contentType = request.headers[.contentType]
        let mediaType = RequestParameters.mediaType(of: contentType)
        var types: Set<String> = []
        if case .mediaTypes(let accepted) = endpoint.body { types = accepted }
        if let mediaType, types.contains(mediaType) { return }
        if let mediaType, mediaType == "application/json" || mediaType.hasSuffix("+json") {
            throw OAuthHTTPError.invalidRequest("the body must be form-encoded (application/x-www-form-urlencoded), not JSON (RFC 6749 section 3.2)")
        }
        if !types.isEmpty {
            guard let mediaType, types.contains(mediaType) else {
                throw OAuthHTTPError(.unsupportedMediaType, .invalidRequest, "the body must be one of \(types.sorted().joined(separator: ", "))")
            }
            return
        }
        let required = endpoint.body == .form(required: true)
        if required || contentType != nil, !RequestParameters.isForm(contentType) {
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
}
