// The signed-in browser: a cookie naming a stored session.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// Starts, finds and ends browser sessions, and binds login forms to the browser.
public struct BrowserSessions: Sendable {
    /// Signet's cookies. Over https their names carry the `__Host-` prefix (RFC 6265bis §4.1.3.2),
    /// so the browser accepts them only when `Secure`, host-only and for `/`: a sibling
    /// subdomain cannot plant or overwrite them.
    public enum CookieName: String, Sendable {
        /// The session cookie: `HttpOnly; SameSite=Lax`, `Secure` over TLS.
        case session = "signet_session"
        /// A random per-browser value a login form is bound to, so a form cannot be posted from another browser.
        case browser = "signet_browser"
        /// Holds a Remember-User-ID token for the page.
        case remember = "signet_remember"
    }

    let server: ServerContext
    let sessions: any SessionStore
    let users: any UserStore
    let browserSessionLifetime: TimeInterval

    public init(server: ServerContext, sessions: any SessionStore, users: any UserStore, browserSessionLifetime: TimeInterval) {
        (self.server, self.sessions, self.users, self.browserSessionLifetime) = (server, sessions, users, browserSessionLifetime)
    }

    /// Whether the provider is served over https (then cookies are `Secure` and `__Host-` prefixed).
    var isSecure: Bool { server.issuer.lowercased().hasPrefix("https://") }

    /// A cookie's name as sent: `__Host-` prefixed over https.
    public func name(_ cookie: CookieName) -> String { isSecure ? "__Host-" + cookie.rawValue : cookie.rawValue }

    /// The live session of this browser, if any.
    public func current(_ request: Request) async throws -> BrowserSessionRecord? {
        guard let value = request.cookies[name(.session)]?.value, value.utf8.count <= 128 else { return nil }
        guard let session = try await sessions.session(idHash: SecretDigest.hex(value)), session.expiresAt > server.now() else {
            return nil
        }
        guard let user = try await users.user(id: session.userID), !user.locked, user.securityStamp == session.userStamp else { return nil }
        return session
    }

    /// Starts a session for an authentication; returns it and the cookie to set.
    public func start(_ authentication: Authentication) async throws -> (BrowserSessionRecord, Cookie) {
        let value = server.random.token()
        let lifetime = browserSessionLifetime
        let session = BrowserSessionRecord(
            idHash: SecretDigest.hex(value), sid: authentication.sessionID ?? server.random.token(byteCount: 16), userID: authentication.userID,
            authTime: authentication.time, acr: authentication.acr, amr: authentication.amr,
            expiresAt: server.now().addingTimeInterval(lifetime))
        var stamped = session
        stamped.userStamp = authentication.userStamp
        try await sessions.insertSession(stamped)
        return (session, cookie(.session, value: value, maxAge: Int(lifetime)))
    }

    /// Ends this browser's session; returns the cookie that clears it.
    public func end(_ request: Request) async throws -> Cookie {
        if let value = request.cookies[name(.session)]?.value, value.utf8.count <= 128 {
            try await sessions.deleteSession(idHash: SecretDigest.hex(value))
        }
        return cookie(.session, value: "", maxAge: 0)
    }

    /// This browser's binding value, and the cookie to set when it had none.
    public func browserBinding(_ request: Request) -> (value: String, cookie: Cookie?) {
        if let value = request.cookies[name(.browser)]?.value, (32...64).contains(value.utf8.count) {
            return (value, nil)
        }
        let value = server.random.token()
        return (value, cookie(.browser, value: value, maxAge: nil))
    }

    /// An `HttpOnly; SameSite=Lax; Path=/` host-only cookie, `Secure` and `__Host-` named when the issuer is https.
    func cookie(_ cookie: CookieName, value: String, maxAge: Int?) -> Cookie {
        Cookie(name: name(cookie), value: value, maxAge: maxAge, path: "/", secure: isSecure, httpOnly: true, sameSite: .lax)
    }
}
