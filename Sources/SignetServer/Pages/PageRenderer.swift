// Renders the hosted pages with the headers pages need.
import Foundation
import Hummingbird
import Mustache

/// Renders hosted pages: escaped Mustache, a strict Content-Security-Policy, no framing, no caching.
public struct PageRenderer: Sendable {
    /// One library per page: the shared layout with the page as its `content` partial.
    private let libraries: [String: MustacheLibrary]
    private let issuer: @Sendable () -> String

    /// - Parameter issuer: reads the issuer when a page is rendered (it may be learned only once the port is bound).
    public init(issuer: @escaping @Sendable () -> String) {
        self.issuer = issuer
        // Values are escaped by Signet's own escaping (PageHTMLContentType), named in every
        // template: a partial starts again from the library's default.
        MustacheContentTypes.register(PageHTMLContentType(), named: PageHTMLContentType.name)
        // The templates are constants written above; failing to parse them is a programming error.
        let layout = try! MustacheTemplate(string: PageHTMLContentType.pragma + PageTemplates.layout)
        var libraries: [String: MustacheLibrary] = [:]
        for (name, text) in [
            ("login", PageTemplates.login), ("sms", PageTemplates.sms), ("message", PageTemplates.message), ("logout", PageTemplates.logoutConfirm),
            ("continue", PageTemplates.continueAs), ("return", PageTemplates.returnToApp),
        ] {
            libraries[name] = MustacheLibrary(templates: [
                "layout": layout, "content": try! MustacheTemplate(string: PageHTMLContentType.pragma + text),
            ])
        }
        self.libraries = libraries
    }

    /// A page built from one of the templates.
    ///
    /// - Parameters:
    ///   - formTargets: extra `form-action` sources, e.g. the origin a form's redirect goes to
    ///     (browsers apply `form-action` to redirects after a POST).
    public func render(_ template: String, title: String, values: [String: String], status: HTTPResponse.Status = .ok, formTargets: [String] = [])
        -> Response
    {
        var context: [String: Any] = values
        context["title"] = title
        context["lang"] = "en"
        let issuer = self.issuer()
        context["issuer"] = issuer
        context["issuerHost"] = URL(string: issuer)?.host ?? issuer
        let html = libraries[template]?.render(context, withTemplate: "layout") ?? ""
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
        headers[.contentSecurityPolicy] = Self.contentSecurityPolicy(formTargets: formTargets)
        headers[.cacheControl] = "no-store"
        headers[.xFrameOptions] = "DENY"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A page with a heading and a message, for errors and confirmations.
    public func message(heading: String, message: String, detail: String? = nil, status: HTTPResponse.Status) -> Response {
        var values = ["heading": heading, "message": message]
        values["detail"] = detail
        return render("message", title: heading, values: values, status: status)
    }

    /// No scripts at all, styles from this origin, forms to this origin (and the redirect's), never framed.
    static func contentSecurityPolicy(formTargets: [String]) -> String {
        let targets = (["'self'"] + formTargets).joined(separator: " ")
        return "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action \(targets); frame-ancestors 'none'; base-uri 'none'"
    }

    /// The `form-action` source that lets a form's redirect reach `redirectURI`.
    static func formTarget(for redirectURI: String) -> String? {
        guard let components = URLComponents(string: redirectURI), let scheme = components.scheme?.lowercased() else { return nil }
        if scheme == "http" || scheme == "https", let host = components.host {
            let port = components.port.map { ":\($0)" } ?? ""
            return "\(scheme)://\(host)\(port)"
        }
        return scheme + ":"
    }

    /// The stylesheet, cacheable for an hour.
    public static func stylesheet() -> Response {
        var headers: HTTPFields = [.contentType: "text/css; charset=utf-8"]
        headers[.cacheControl] = "public, max-age=3600"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: PageTemplates.stylesheet)))
    }
}
