// The client address behind trusted proxies (RFC 7239 Forwarded, X-Forwarded-For).
import Foundation

/// Which header a trusted proxy names the client in. Only that one is read: a proxy passes
/// the other through as the client sent it, so falling back to it would let a client choose
/// its own address.
public enum ForwardedHeader: String, Sendable, CaseIterable {
    /// `X-Forwarded-For` (nginx `$proxy_add_x_forwarded_for`, HAProxy `option forwardfor`, most load balancers).
    case xForwardedFor = "x-forwarded-for"
    /// `Forwarded` (RFC 7239), `for=` parameters.
    case forwarded
}

/// Finds the client's address from the peer and the forwarding header, trusting the header
/// only as far as the chain of trusted proxies reaches.
///
/// Hand-written: no package here parses `Forwarded` (RFC 7239). The rule is the usual one:
/// when the TCP peer is a trusted proxy, walk the forwarded addresses from the nearest (last)
/// to the farthest and take the first one that is not itself a trusted proxy. A header sent by
/// anyone else is ignored, so a client cannot choose the address it is throttled under.
public struct ForwardedFor: Sendable {
    public let trustedProxies: [IPNetwork]
    public let header: ForwardedHeader

    public init(trustedProxies: [IPNetwork], header: ForwardedHeader = .xForwardedFor) {
        self.trustedProxies = trustedProxies
        self.header = header
    }

    func isTrusted(_ address: String) -> Bool { trustedProxies.contains { $0.contains(address) } }

    /// The client address for a request from `peer` whose configured header has these values
    /// (in order; the header may be repeated). An entry that is not an address (obfuscated,
    /// `unknown`, garbage) stops the walk: the nearest trusted hop's view is used.
    public func clientAddress(peer: String, headerValues: [String]) -> String {
        guard !trustedProxies.isEmpty, isTrusted(peer) else { return peer }
        let chain = header == .forwarded ? Self.parseForwarded(headerValues) : Self.parseXForwardedFor(headerValues)
        var client = peer
        for hop in chain.reversed() {
            guard let hop, ClientAddress.bytes(hop) != nil else { return client }
            client = hop
            if !isTrusted(hop) { return hop }
        }
        return client
    }

    /// The `for=` addresses of RFC 7239 `Forwarded` values, in order; `nil` for obfuscated or unknown ones.
    static func parseForwarded(_ values: [String]) -> [String?] {
        var addresses: [String?] = []
        for value in values {
            for element in value.split(separator: ",") {
                for pair in element.split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard parts.count == 2, parts[0].lowercased() == "for" else { continue }
                    addresses.append(node(parts[1]))
                }
            }
        }
        return addresses
    }

    /// The addresses of `X-Forwarded-For` values, in order.
    static func parseXForwardedFor(_ values: [String]) -> [String?] {
        values.flatMap { $0.split(separator: ",") }.map { node($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// An address from a node (`192.0.2.1`, `"[2001:db8::1]:4711"`, `192.0.2.1:80`); `nil` when it is none.
    static func node(_ raw: String) -> String? {
        var text = raw
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1 {
            text = String(text.split(separator: ":")[0])
        }
        return ClientAddress.bytes(text) != nil ? text : nil
    }
}
