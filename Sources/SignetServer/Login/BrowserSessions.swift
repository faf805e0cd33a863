// The signed-in browser: a cookie naming a stored session.
import Foundation
import Hummingbird
import SignetCore

/// Starts, finds and ends browser sessions, and binds login forms to the browser.
public struct BrowserSessions: Sendable {
    /// The session cookie: `HttpOnly; SameSite=Lax`, `Secure` over TLS.
    public static let sessionCookie = "signet_session"
    /// A random per-browser value a login form is bound to, so a form cannot be posted from another browser.
    public static let browserCookie = "signet_browser"

    let provider: Provider

    public init(provider: Provider) { self.provider = provider }

    /// The live session of this browser, if any.
    public func current(_ request: Request) async throws -> BrowserSessionRecord? {
        guard let value = request.cookies[Self.sessionCookie]?.value, value.utf8.count <= 128 else { return nil }
        guard let session = try await provider.store.session(idHash: SecretDigest.hex(value)), session.expiresAt > provider.now() else {
            return nil
        }
        guard let user = try await provider.store.user(id: session.userID), !user.locked else { return nil }
        return session
    }

    /// Starts a session for an authentication; returns it and the cookie to set.
    public func start(_ authentication: Authentication) async throws -> (BrowserSessionRecord, Cookie) {
        let value = provider.random.token()
        let lifetime = provider.configuration.browserSessionLifetime
        let session = BrowserSessionRecord(
            idHash: SecretDigest.hex(value), sid: authentication.sessionID ?? provider.random.token(byteCount: 16), userID: authentication.userID,
            authTime: authentication.time, acr: authentication.acr, amr: authentication.amr,
            expiresAt: provider.now().addingTimeInterval(lifetime))
        try await provider.store.insertSession(session)
        return (session, cookie(Self.sessionCookie, value: value, maxAge: Int(lifetime)))
    }

    /// Ends this browser's session; returns the cookie that clears it.
    public func end(_ request: Request) async throws -> Cookie {
        if let value = request.cookies[Self.sessionCookie]?.value, value.utf8.count <= 128 {
            try await provider.store.deleteSession(idHash: SecretDigest.hex(value))
        }
        return cookie(Self.sessionCookie, value: "", maxAge: 0)
    }

    /// This browser's binding value, and the cookie to set when it had none.
    public func browserBinding(_ request: Request) -> (value: String, cookie: Cookie?) {
        if let value = request.cookies[Self.browserCookie]?.value, (32...64).contains(value.utf8.count) {
            return (value, nil)
        }
        let value = provider.random.token()
        return (value, cookie(Self.browserCookie, value: value, maxAge: nil))
    }

    /// An `HttpOnly; SameSite=Lax; Path=/` cookie, `Secure` when the issuer is https.
    func cookie(_ name: String, value: String, maxAge: Int?) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", secure: provider.issuer.lowercased().hasPrefix("https://"), httpOnly: true, sameSite: .lax)
    }
}
