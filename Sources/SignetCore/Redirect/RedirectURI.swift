// Redirect-URI registration and matching for native and web apps (RFC 6749 §3.1.2, RFC 8252 §7).
import Foundation

/// The rules for registered redirect URIs and for matching a requested one.
///
/// Matching is exact, character for character, with the one exception of
/// RFC 8252 §7.3: for loopback IP literals (`http://127.0.0.1`, `http://[::1]`)
/// any port matches, because a native app picks a free port at run time.
/// `localhost` is not a loopback literal here (RFC 8252 §8.3) and is matched exactly.
public enum RedirectURI {
    /// The three kinds of native redirect URIs of RFC 8252 §7, plus web (`https`) ones.
    public enum Kind: String, Sendable, Equatable {
        case privateUseScheme = "private-use scheme"
        case claimedHTTPS = "https"
        case loopback = "loopback"
    }

    /// The kind of a registrable redirect URI, or the reason it cannot be registered.
    public static func classify(_ uri: String) -> Result<Kind, RegistrationProblem> {
        guard uri.utf8.count <= 2048 else { return .failure(.tooLong) }
        guard !uri.contains("#") else { return .failure(.fragment) }
        guard let components = URLComponents(string: uri), let scheme = components.scheme else {
            return .failure(.notAbsolute)
        }
        if components.user != nil || components.password != nil { return .failure(.userinfo) }
        switch scheme.lowercased() {
        case "https":
            guard let host = components.host, !host.isEmpty else { return .failure(.notAbsolute) }
            return .success(.claimedHTTPS)
        case "http":
            guard let host = components.host, Loopback.isIPLiteral(host) else { return .failure(.plainHTTP) }
            return .success(.loopback)
        case "javascript", "data", "file", "vbscript":
            return .failure(.dangerousScheme)
        default:
            // RFC 8252 §7.1: a private-use scheme should be a reverse domain name (contains a period).
            guard scheme.contains(".") else { return .failure(.schemeNotReverseDomain) }
            return .success(.privateUseScheme)
        }
    }

    /// Whether `requested` matches one of `registered` under the rules above.
    public static func matches(_ requested: String, registered: [String]) -> Bool {
        registered.contains { matches(requested, registered: $0) }
    }

    /// Whether `requested` matches the single registered URI `registered`.
    public static func matches(_ requested: String, registered: String) -> Bool {
        if requested == registered { return !requested.contains("#") }
        guard case .success(.loopback) = classify(registered), case .success(.loopback) = classify(requested),
            let want = URLComponents(string: registered), let got = URLComponents(string: requested)
        else { return false }
        // RFC 8252 §7.3: everything but the port must match exactly, and the port must be one a
        // socket can listen on (1–65535), when given: read from the text itself, since a parser
        // may wrap a port too large for its integer.
        guard hasListenablePort(requested) else { return false }
        return got.scheme == want.scheme && got.host == want.host && got.percentEncodedPath == want.percentEncodedPath
            && got.percentEncodedQuery == want.percentEncodedQuery
    }

    /// Whether the authority of the http URI `uri` has no port, or a port of 1 to 5 digits
    /// between 1 and 65535.
    static func hasListenablePort(_ uri: String) -> Bool {
        guard let start = uri.range(of: "://")?.upperBound else { return false }
        let authority = uri[start...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let afterHost = authority.hasPrefix("[") ? authority.drop { $0 != "]" }.dropFirst() : authority.drop { $0 != ":" }
        guard !afterHost.isEmpty else { return true }
        guard afterHost.first == ":" else { return false }
        let digits = afterHost.dropFirst()
        guard (1...5).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }), let port = Int(digits) else { return false }
        return (1...65_535).contains(port)
    }

    /// Why a redirect URI cannot be registered.
    public enum RegistrationProblem: String, Error, Sendable, Equatable {
        case tooLong = "is longer than 2048 characters"
        case fragment = "contains a fragment (RFC 6749 §3.1.2)"
        case notAbsolute = "is not an absolute URI"
        case userinfo = "contains userinfo"
        case plainHTTP = "uses http on a host that is not a loopback IP literal (RFC 8252 §8.3)"
        case dangerousScheme = "uses a scheme that can run code"
        case schemeNotReverseDomain = "uses a private-use scheme that is not a reverse domain name (RFC 8252 §7.1)"
    }
}
