// ASWebAuthenticationSession as an ExternalUserAgent (Apple platforms only).
//
// Not compiled on Linux CI: keep it small and change it on a Mac.
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
    import AuthenticationServices
    import Foundation
    import Synchronization

    /// Shows the authorization request in `ASWebAuthenticationSession` — RFC 8252 §8.12.
    ///
    /// Ephemeral by default (`prefersEphemeralWebBrowserSession`): no cookies are shared with
    /// Safari, so no "wants to use … to sign in" prompt and no provider session outlives the app's
    /// sign-out. Claimed https redirect URIs are caught with
    /// `ASWebAuthenticationSession.Callback.https(host:path:)` (the app's associated domain must list
    /// the host under `webcredentials`); private-use schemes with `.customScheme`. Loopback `http`
    /// redirects cannot be caught by the session and are refused.
    ///
    /// ```swift
    /// let agent = WebAuthenticationSessionAgent { view.window! }
    /// let tokens = try await client.signIn(agent: agent)
    /// ```
    public struct WebAuthenticationSessionAgent: ExternalUserAgent {
        private let anchor: @MainActor @Sendable () -> ASPresentationAnchor
        /// Whether the session keeps no cookies (default `true`).
        public let ephemeral: Bool

        /// - Parameters:
        ///   - ephemeral: `prefersEphemeralWebBrowserSession`; pass `false` to share Safari's cookies (SSO across apps).
        ///   - anchor: the window to show the sheet over, read on the main actor when the session asks.
        public init(ephemeral: Bool = true, anchor: @escaping @MainActor @Sendable () -> ASPresentationAnchor) {
            self.ephemeral = ephemeral
            self.anchor = anchor
        }

        public func present(_ url: URL, redirectURI: URL) async throws -> URL {
            try await Self.run(url: url, redirectURI: redirectURI, ephemeral: ephemeral, provider: AnchorProvider(anchor: anchor))
        }

        @MainActor
        private static func run(url: URL, redirectURI: URL, ephemeral: Bool, provider: AnchorProvider) async throws -> URL {
            let callback: ASWebAuthenticationSession.Callback
            switch redirectURI.scheme?.lowercased() {
            case "https"?:
                guard let host = redirectURI.host else {
                    throw SignetClientError(.misuse, isRetryable: false, reason: "the https redirect URI has no host")
                }
                callback = .https(host: host, path: redirectURI.path.isEmpty ? "/" : redirectURI.path)
            case "http"?, nil:
                throw SignetClientError(
                    .misuse, isRetryable: false, reason: "ASWebAuthenticationSession cannot catch an http or scheme-less redirect URI")
            case let scheme?:
                callback = .customScheme(scheme)
            }
            let pending = PendingCallback()
            // @Sendable: the session may call it on any queue, and it touches only `pending`.
            let session = ASWebAuthenticationSession(url: url, callback: callback) { @Sendable callbackURL, error in
                pending.finish(callbackURL, error)
            }
            session.prefersEphemeralWebBrowserSession = ephemeral
            session.presentationContextProvider = provider
            let box = SessionBox(session: session)
            // The session must stay referenced while it is shown (it closes when released), and it
            // holds its presentation context provider weakly: both live until this function returns.
            defer { withExtendedLifetime((box, provider)) {} }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    pending.wait(continuation)
                    if !box.session.start() {
                        pending.finish(nil, SignetClientError(.userAgent, isRetryable: true, reason: "ASWebAuthenticationSession did not start"))
                    }
                }
            } onCancel: {
                Task { @MainActor in box.session.cancel() }
            }
        }

        /// Keeps the session alive while it is shown, reachable from the cancellation handler.
        @MainActor
        private final class SessionBox {
            let session: ASWebAuthenticationSession
            init(session: ASWebAuthenticationSession) { self.session = session }
        }

        /// The session's one answer, handed to the waiting continuation exactly once.
        private final class PendingCallback: Sendable {
            private let state = Mutex<(continuation: CheckedContinuation<URL, any Error>?, result: Result<URL, any Error>?)>((nil, nil))

            func wait(_ continuation: CheckedContinuation<URL, any Error>) {
                let early = state.withLock { state -> Result<URL, any Error>? in
                    if let result = state.result { return result }
                    state.continuation = continuation
                    return nil
                }
                if let early { continuation.resume(with: early) }
            }

            func finish(_ url: URL?, _ error: (any Error)?) {
                let result: Result<URL, any Error>
                if let url {
                    result = .success(url)
                } else if let error = error as? ASWebAuthenticationSessionError, error.code == .canceledLogin {
                    result = .failure(SignetClientError(.cancelled, isRetryable: false, underlying: error))
                } else if let error = error as? SignetClientError {
                    result = .failure(error)
                } else {
                    result = .failure(SignetClientError(.userAgent, isRetryable: true, underlying: error))
                }
                let waiting = state.withLock { state -> CheckedContinuation<URL, any Error>? in
                    guard state.result == nil else { return nil }
                    state.result = result
                    defer { state.continuation = nil }
                    return state.continuation
                }
                waiting?.resume(with: result)
            }
        }

        /// Tells the session which window to show over.
        private final class AnchorProvider: NSObject, ASWebAuthenticationPresentationContextProviding, Sendable {
            let anchor: @MainActor @Sendable () -> ASPresentationAnchor
            init(anchor: @escaping @MainActor @Sendable () -> ASPresentationAnchor) { self.anchor = anchor }

            // The session asks on the main thread.
            nonisolated func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
                MainActor.assumeIsolated { anchor() }
            }
        }
    }
#endif
