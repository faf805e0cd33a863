// The browser an authorization request is shown in — RFC 8252 §6, AppAuth's OIDExternalUserAgent.
import Foundation

/// Shows an authorization URL to the user and hands back the redirect to the app.
///
/// RFC 8252 §8.12: native apps sign in through an external user agent (the system browser or
/// `ASWebAuthenticationSession`), never an embedded web view, so the app never sees the
/// password. ``WebAuthenticationSessionAgent`` is the Apple implementation; ``ScriptedUserAgent``
/// drives the flow in tests.
public protocol ExternalUserAgent: Sendable {
    /// Shows `url` and returns the URL the provider redirected to, once it reaches `redirectURI`.
    ///
    /// - Parameters:
    ///   - url: the authorization request (`/authorize?…`).
    ///   - redirectURI: the app's registered redirect URI; the callback to wait for.
    /// - Throws: ``SignetClientError`` with ``SignetClientError/Code/cancelled`` when the user
    ///   closed the browser (or the task was cancelled), ``SignetClientError/Code/userAgent`` when
    ///   it could not be shown.
    func present(_ url: URL, redirectURI: URL) async throws -> URL
}

/// An agent whose answer comes from a closure: for tests, and for apps that open the
/// browser themselves and resume with the URL their scene delegate receives.
public struct ScriptedUserAgent: ExternalUserAgent {
    private let script: @Sendable (_ url: URL, _ redirectURI: URL) async throws -> URL

    /// - Parameter script: gets the authorization URL and the redirect URI, returns the redirect.
    public init(_ script: @escaping @Sendable (_ url: URL, _ redirectURI: URL) async throws -> URL) { self.script = script }

    public func present(_ url: URL, redirectURI: URL) async throws -> URL {
        try Task.checkCancellation()
        return try await script(url, redirectURI)
    }

    /// An agent the user always closes: every presentation throws ``SignetClientError/Code/cancelled``.
    public static var cancelling: ScriptedUserAgent {
        ScriptedUserAgent { _, _ in throw SignetClientError(.cancelled, isRetryable: false) }
    }
}
