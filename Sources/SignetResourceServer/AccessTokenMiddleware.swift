// A Hummingbird middleware that lets through only requests with a valid access token for this API.
import Foundation
import HTTPTypes
import NIOCore
import Hummingbird
import SignetCore
import SignetRelyingParty

/// Verifies each request's access token with an ``SignetRelyingParty/AccessTokenVerifier`` and
/// puts the ``SignetRelyingParty/VerifiedAccessToken`` in the context, or answers the refusal itself.
///
/// A refusal is answered with its status (400, 401, 403), a JSON body `{error, error_description}`
/// (RFC 6750 §3.1, RFC 9449 §7.1) and its `WWW-Authenticate` challenges; when the issuer's keys
/// cannot be fetched, 503 `temporarily_unavailable`. Add one per group of routes that need the
/// same scopes:
///
/// ```swift
/// router.group("accounts")
///     .add(middleware: AccessTokenMiddleware(verifier: verifier, publicBaseURL: "https://api.example.com", requiredScopes: ["accounts"]))
///     .get { _, context in try context.requireAccessToken().subject }
/// ```
///
/// The DPoP proof's `htu` is compared with `publicBaseURL` + the request's path, never with the
/// `Host` header. An `access_token` in the query or a form body is refused (FAPI 2.0 Security
/// Profile §5.3.4: the header only); a form body is read for that check up to the context's
/// `maxUploadSize`, and handed on to the route.
public struct AccessTokenMiddleware<Context: AccessTokenRequestContext>: RouterMiddleware {
    /// The verifier, shared by every route (its key set and replay cache are actors).
    public let verifier: AccessTokenVerifier
    /// The API's public base URL, e.g. `https://api.example.com` — what callers put in `htu`.
    public let publicBaseURL: String
    /// The scopes every request through this middleware needs, all of them.
    public let requiredScopes: [String]
    /// The `x5t#S256` of the client certificate verified for a request — by the API's own mutual
    /// TLS (the channel's peer certificate) or read from a header only a trusted proxy may set —
    /// or `nil`. Without it, certificate-bound tokens (RFC 8705, Signet's device tokens) are
    /// refused, as the RFC requires of a resource that cannot see the certificate.
    public let clientCertificateThumbprint: (@Sendable (Request, Context) async -> String?)?

    /// A middleware for routes that need `requiredScopes`.
    ///
    /// - Parameter clientCertificateThumbprint: how to learn the verified client certificate's
    ///   thumbprint, for APIs that accept certificate-bound tokens.
    public init(
        verifier: AccessTokenVerifier, publicBaseURL: String, requiredScopes: [String] = [],
        clientCertificateThumbprint: (@Sendable (Request, Context) async -> String?)? = nil
    ) {
        self.verifier = verifier
        self.publicBaseURL = publicBaseURL
        self.requiredScopes = requiredScopes
        self.clientCertificateThumbprint = clientCertificateThumbprint
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        let tokenParameter = try await Self.hasAccessTokenParameter(&request, maxBodySize: context.maxUploadSize)
        var described = ProtectedResourceRequest(
            method: request.method.rawValue, publicBaseURL: publicBaseURL, path: request.uri.path,
            authorization: request.headers[values: .authorization], dpop: request.headers[values: .dpop],
            hasAccessTokenParameter: tokenParameter)
        described.clientCertificateThumbprint = await clientCertificateThumbprint?(request, context)
        let verification: AccessTokenVerification
        do {
            verification = try await verifier.verify(described, requiredScopes: requiredScopes)
        } catch {
            context.logger.error(
                "access token not judged: the issuer's keys or the DPoP replay cache could not be reached", metadata: ["error": "\(type(of: error))"])
            return Self.response(
                status: .serviceUnavailable, error: OAuthError(.temporarilyUnavailable, "the access token cannot be checked right now"),
                challenges: [])
        }
        switch verification {
        case .valid(let token):
            var context = context
            context.accessToken = token
            return try await next(request, context)
        case .invalid(let failure):
            context.logger.debug("access token refused", metadata: ["reason": "\(failure.reason)"])
            return Self.response(
                status: HTTPResponse.Status(code: failure.status), error: failure.error,
                challenges: failure.challenges(configuration: verifier.configuration))
        }
    }

    /// Whether the query or a form body names `access_token` (RFC 6750 §2.2, §2.3); the body is
    /// collected and put back, so the route still reads it.
    static func hasAccessTokenParameter(_ request: inout Request, maxBodySize: Int) async throws -> Bool {
        if let query = request.uri.query, names(in: query, contain: "access_token") { return true }
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/x-www-form-urlencoded") else { return false }
        let body = try await request.collectBody(upTo: maxBodySize)
        return names(in: String(buffer: body), contain: "access_token")
    }

    /// Whether the form-encoded `text` has a parameter `name`; an undecodable text is searched as is.
    static func names(in text: String, contain name: String) -> Bool {
        guard let parameters = FormParameters(encoded: text) else { return text.contains(name) }
        return parameters.pairs.contains { $0.name == name }
    }

    /// An OAuth error answer: JSON `{error, error_description}`, `Cache-Control: no-store`, and one
    /// `WWW-Authenticate` field per challenge.
    static func response(status: HTTPResponse.Status, error: OAuthError, challenges: [String]) -> Response {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        for challenge in challenges { headers.append(HTTPField(name: .wwwAuthenticate, value: challenge)) }
        let body = (try? JSONEncoder().encode(error)) ?? Data(#"{"error":"server_error"}"#.utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension HTTPField.Name {
    /// DPoP — RFC 9449 §4.1.
    static let dpop = Self("DPoP")!
}
