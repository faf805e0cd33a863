// The client address behind trusted proxies (RFC 7239 Forwarded, X-Forwarded-For).
import Foundation

/// Finds the client's address from the peer and the forwarding headers, trusting the headers
/// only as far as the chain of trusted proxies reaches.
///
/// Hand-written: no package here parses `Forwarded` (RFC 7239). The rule is the usual one:
/// when the TCP peer is a trusted proxy, walk the forwarded addresses from the nearest (last)
/// to the farthest and take the first one that is not itself a trusted proxy. A header sent by
/// anyone else is ignored, so a client cannot choose the address it is throttled under.
public struct ForwardedFor: Sendable {
    public let trustedProxies: [IPNetwork]

    public init(trustedProxies: [IPNetwork]) { self.trustedProxies = trustedProxies }

    func isTrusted(_ address: String) -> Bool { trustedProxies.contains { $0.contains(address) } }

    /// The client address for a request from `peer` with these header values.
    ///
    /// `Forwarded` wins over `X-Forwarded-For` when both are present; each may be repeated
    /// (values are read in order). Unparseable or obfuscated entries stop the walk there:
    /// the last trusted hop's view is used.
    public func clientAddress(peer: String, forwarded: [String], xForwardedFor: [String]) -> String {
        guard !trustedProxies.isEmpty, isTrusted(peer) else { return peer }
        let chain = forwarded.isEmpty ? Self.parseXForwardedFor(xForwardedFor) : Self.parseForwarded(forwarded)
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
