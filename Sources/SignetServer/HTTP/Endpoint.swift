// An endpoint declared once: method, path, body, error dialect and handler. Everything the edge
// does around it (405 with Allow, content types, errors as OAuth JSON) is derived from this.
import HTTPTypes
import Hummingbird

/// One endpoint of the provider, as its capability declares it (``EndpointGroup``).
///
/// ``EndpointTable`` routes it and derives the rest: the other methods of its path answer 405
/// with `Allow` in the path's dialect, its body is checked against ``Body`` before the handler
/// runs, and, for ``Dialect/oauth``, every error becomes OAuth JSON.
struct Endpoint: Sendable {
    /// How an endpoint's errors are answered.
    enum Dialect: Sendable {
        /// The endpoints programs call with OAuth semantics (`/token`, `/par`, `/revoke`,
        /// `/userinfo`, the device and UAF APIs): every error, the framework's included, is an
        /// RFC 6749 §5.2 JSON error (UAF refusals keep their UAF status beside it).
        case oauth
        /// JSON APIs that answer their own errors (the native login API); a wrong method is a
        /// JSON `invalid_request` with 405.
        case api
        /// Browser pages and public documents: their own answers, and the framework's.
        case page
    }

    /// What a POST (or PUT, PATCH) may carry.
    enum Body: Sendable, Equatable {
        /// Nothing is read.
        case none
        /// `application/x-www-form-urlencoded`, required or not (a POST without a body may be one).
        case form(required: Bool)
        /// One of these media types (JSON, a certificate request, …).
        case mediaTypes(Set<String>)

        static let json = Body.mediaTypes(["application/json"])
    }

    let method: HTTPRequest.Method
    /// The router's path, with `:name` parameters.
    let path: String
    let body: Body
    let dialect: Dialect
    let handler: @Sendable (Request, SignetRequestContext) async throws -> Response

    /// Whether a GET changes what is stored (begins a login, spends a pushed request, issues a
    /// code, signs out): such a GET answers no HEAD, so that a link checker or a prefetcher that
    /// only looks cannot act for the user.
    let changesState: Bool

    init(
        _ method: HTTPRequest.Method, _ path: String, body: Body = .none, dialect: Dialect, changesState: Bool = false,
        _ handler: @escaping @Sendable (Request, SignetRequestContext) async throws -> Response
    ) {
        (self.method, self.path, self.body, self.dialect, self.handler) = (method, path, body, dialect, handler)
        self.changesState = changesState
    }

    /// HEAD for this GET endpoint (RFC 9110 §9.3.2: a server that answers GET answers HEAD): the
    /// same answer, status and fields, without content.
    var head: Endpoint {
        // The OAuth rules strip the content of every HEAD answer themselves, errors included.
        guard dialect != .oauth else { return Endpoint(.head, path, body: body, dialect: dialect, handler) }
        return Endpoint(.head, path, body: body, dialect: dialect) { [handler] request, context in
            try await handler(request, context).createHeadResponse()
        }
    }
}

/// A capability's endpoints, declared in its own folder beside the component that answers them.
protocol EndpointGroup: Sendable {
    var endpoints: [Endpoint] { get }
}
