// Headers every response carries, and the content-type checks of pages.
import HTTPTypes
import Hummingbird

/// Adds the headers every Signet response carries: no sniffing, no referrer, no framing, and
/// HSTS when Signet is served over https (itself or behind a proxy).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Whether to send `Strict-Transport-Security` (RFC 6797): one year, subdomains not included
    /// (the issuer's host may share a domain with sites Signet does not control).
    let strictTransportSecurity: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "no-referrer"
        if response.headers[.xFrameOptions] == nil { response.headers[.xFrameOptions] = "DENY" }
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        if strictTransportSecurity { response.headers[.strictTransportSecurity] = "max-age=31536000" }
        return response
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let pragma = Self("Pragma")!
    static let strictTransportSecurity = Self("Strict-Transport-Security")!
    /// DPoP — RFC 9449 §4.1.
    static let dpop = Self("DPoP")!
    /// DPoP-Nonce — RFC 9449 §8.
    static let dpopNonce = Self("DPoP-Nonce")!
}
