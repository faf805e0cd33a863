// Which store a `--database` value names, and how to show it without its password. Read by hand:
// a password with characters a URL may not hold defeats `URLComponents`, and nothing here may
// echo one.
import Foundation

extension SQLStore {
    /// The SQLite file a `--database` value names (a path, or `sqlite://` and a path); `nil` for a
    /// URL of another scheme (`postgres://`, `postgresql://`; see ``locationProblem(_:)``).
    /// Schemes are compared without case (RFC 3986 §3.1).
    public static func sqlitePath(of location: String) -> String? {
        guard let scheme = urlScheme(of: location) else { return location }
        return scheme == "sqlite" ? String(location.dropFirst("sqlite://".count)) : nil
    }

    /// Why a `--database` value names no store Signet opens, or `nil` when it names one: a URL
    /// whose scheme is not `sqlite`, `postgres` or `postgresql`. Only the scheme is named, since
    /// the rest of a URL may hold a password.
    public static func locationProblem(_ location: String) -> String? {
        let accepted = "give an SQLite file path, sqlite://<path> or postgres://<user>@<host>/<database>"
        if let scheme = urlScheme(of: location) {
            guard ["sqlite", "postgres", "postgresql"].contains(scheme) else { return "a \(scheme):// URL; \(accepted)" }
            // The user information must be told from the host for sure: a password holding
            // `@ / ? #` unencoded would be read partly as the host (and shown in errors). So two
            // `@` in the authority, or one there and another after it, are refused.
            guard scheme != "sqlite", let separator = location.range(of: "://") else { return nil }
            let rest = location[separator.upperBound...]
            let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
            let atSigns = (authority: rest[..<authorityEnd].filter { $0 == "@" }.count, after: rest[authorityEnd...].filter { $0 == "@" }.count)
            guard atSigns.authority > 1 || (atSigns.authority == 1 && atSigns.after > 0) else { return nil }
            return
                "a URL whose user information cannot be told from the rest for sure (percent-encode @ / ? and # in the password and the query, or give the password in SIGNET_DATABASE_PASSWORD)"
        }
        // Shaped like a URL or credentials, yet no URL Signet reads (`jdbc:postgresql://…`,
        // `postgres:/user:password@…`, a stray space before it): never taken for a file path,
        // which would be printed.
        let credentials = location.firstIndex(of: ":").map { location[$0...].contains("@") } ?? false
        if location.contains("://") || credentials || location != location.trimmingCharacters(in: .whitespacesAndNewlines) {
            return "neither a file path nor a URL Signet opens; \(accepted)"
        }
        return nil
    }

    /// A database URL fit to print: the password in its user information replaced by `****`,
    /// its query and fragment (which may hold a `password=`) left out. Read by hand, up to the
    /// last `@`, since a password with characters a URL may not hold defeats `URLComponents`.
    public static func redactedURL(_ location: String) -> String {
        guard let parts = urlParts(location) else { return "<not a URL>" }
        var shown = String(parts.scheme) + "://"
        if let userInformation = parts.userInformation {
            let user = userInformation.prefix { !":/?#".contains($0) }
            shown += user + (userInformation.count > user.count ? ":****" : "") + "@"
        }
        if let cut = parts.rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { return shown + parts.rest[..<cut] + "?…" }
        return shown + String(parts.rest)
    }

    /// Whether a `postgres://` URL carries a password (`user:password@`), read by hand: a
    /// password with characters a URL may not hold (`#`, `/`) defeats `URLComponents`.
    public static func urlHasPassword(_ location: String) -> Bool {
        urlParts(location)?.userInformation?.contains(":") ?? false
    }

    /// A `scheme://…` value split by hand at its last `@`: the scheme as written, what precedes
    /// that `@` (the user information, when the URL is well formed), and what follows it.
    /// `nil` for a file path.
    private static func urlParts(_ location: String) -> (scheme: Substring, userInformation: Substring?, rest: Substring)? {
        guard urlScheme(of: location) != nil, let separator = location.range(of: "://") else { return nil }
        let afterScheme = location[separator.upperBound...]
        guard let at = afterScheme.lastIndex(of: "@") else { return (location[..<separator.lowerBound], nil, afterScheme) }
        return (location[..<separator.lowerBound], afterScheme[..<at], afterScheme[afterScheme.index(after: at)...])
    }

    /// The scheme of a `scheme://…` value, lowercased; `nil` for a file path (RFC 3986 §3.1: a
    /// letter, then letters, digits, `+`, `-` and `.`).
    static func urlScheme(of location: String) -> String? {
        guard let separator = location.range(of: "://") else { return nil }
        let scheme = location[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return scheme.lowercased()
    }

    /// `location` with its scheme in lower case, as PostgresKit's URL parser expects.
    static func lowercasingScheme(_ location: String) -> String {
        guard let scheme = urlScheme(of: location) else { return location }
        return scheme + location.dropFirst(scheme.count)
    }
}
