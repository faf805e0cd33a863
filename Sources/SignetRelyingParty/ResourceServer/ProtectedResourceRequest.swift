// The parts of an HTTP request to an API that decide whether its access token is accepted.

/// What ``AccessTokenVerifier`` reads from a request: its method and public URL, and the headers
/// that carry the token and its DPoP proof.
///
/// Framework-neutral: the Hummingbird middleware in `SignetResourceServer` fills it in, and any
/// other server can too.
public struct ProtectedResourceRequest: Sendable {
    /// The request method, e.g. `GET` — compared with the proof's `htm` (RFC 9449 §4.3).
    public var method: String
    /// The resource's public URL without query or fragment, e.g. `https://api.example.com/accounts`
    /// — compared with the proof's `htu` (RFC 9449 §4.3).
    ///
    /// Build it from the API's configured public base URL, never from the `Host` header, which
    /// the caller chooses: a proof made for another server must not pass here.
    public var url: String
    /// Every `Authorization` header value, in order — RFC 6750 §2.1, RFC 9449 §7.1.
    public var authorization: [String]
    /// Every `DPoP` header value, in order — RFC 9449 §4.1.
    public var dpop: [String]
    /// Whether an `access_token` was also sent in the query or a form body (RFC 6750 §2.2, §2.3).
    ///
    /// Never accepted (FAPI 2.0 Security Profile §5.3.4 allows the header only); such a request
    /// is refused with `invalid_request`.
    public var hasAccessTokenParameter: Bool
    /// `x5t#S256` (base64url SHA-256 of the DER) of the client certificate the API's own TLS, or
    /// a proxy it trusts, verified for this request; `nil` without mutual TLS. A token bound to a
    /// certificate (RFC 8705 §3) is accepted only with the very certificate it names.
    public var clientCertificateThumbprint: String?

    /// A request with the given parts.
    public init(method: String, url: String, authorization: [String], dpop: [String] = [], hasAccessTokenParameter: Bool = false) {
        self.method = method
        self.url = url
        self.authorization = authorization
        self.dpop = dpop
        self.hasAccessTokenParameter = hasAccessTokenParameter
    }

    /// A request for `path` under the API's public base URL, e.g. `https://api.example.com` and `/accounts`.
    ///
    /// A trailing `/` of `publicBaseURL` is dropped, so the two join with exactly one.
    public init(
        method: String, publicBaseURL: String, path: String, authorization: [String], dpop: [String] = [], hasAccessTokenParameter: Bool = false
    ) {
        let base = publicBaseURL.hasSuffix("/") ? String(publicBaseURL.dropLast()) : publicBaseURL
        let tail = path.hasPrefix("/") ? path : "/" + path
        self.init(method: method, url: base + tail, authorization: authorization, dpop: dpop, hasAccessTokenParameter: hasAccessTokenParameter)
    }
}
