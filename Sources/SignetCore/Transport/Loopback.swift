// The one rule for "this host is the machine itself", used by the server, the SDK and the kit.

/// Which hosts are the machine itself, for plain-http development and native-app redirect URIs.
///
/// RFC 8252 §7.3 has native apps receive redirects on a loopback IP literal, and §8.3 advises
/// against the name `localhost` there, because a name can be resolved elsewhere (a hosts file, a
/// firewall). So redirect URIs use ``isIPLiteral(_:)``; where only the operator's own machine is
/// meant (an issuer, an endpoint or a webhook in development, a listening address),
/// ``isHost(_:)`` also accepts `localhost` (RFC 6761 §6.3 keeps it on loopback).
public enum Loopback {
    /// Whether `host` is a loopback IP literal: IPv4 in 127.0.0.0/8 (four decimal octets, as in
    /// `127.0.0.1` or `127.0.0.2`) or IPv6 `::1`, bracketed or not.
    public static func isIPLiteral(_ host: String) -> Bool {
        if host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCIIDigit) && UInt8($0) != nil }
    }

    /// Whether `host` is a loopback IP literal or the name `localhost` (any case).
    public static func isHost(_ host: String) -> Bool {
        isIPLiteral(host) || host.lowercased() == "localhost"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
