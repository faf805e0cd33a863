// Client addresses: parsing, networks (CIDR), and grouping for per-address limits.
import NIOCore

/// How an address is read, matched against networks, and grouped for per-address limits.
public enum ClientAddress {
    /// The address's bytes (4 for IPv4, 16 for IPv6), or `nil` when it is not an IP literal.
    /// Parsing is NIO's (inet_pton); an IPv4-mapped IPv6 address gives its 4 IPv4 bytes.
    public static func bytes(_ address: String) -> [UInt8]? {
        var text = address
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        guard let parsed = try? SocketAddress(ipAddress: text, port: 0) else { return nil }
        switch parsed {
        case .v4(let v4):
            return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff { return Array(bytes[12..<16]) }
            return bytes
        default:
            return nil
        }
    }

    /// The group an address is counted in: an IPv4 address as it is; an IPv6 address by its
    /// /64 prefix (one subscriber usually holds a whole /64, so counting single IPv6 addresses
    /// would give an attacker 2^64 fresh budgets); an IPv4-mapped IPv6 address as its IPv4.
    /// Anything that does not parse is counted as itself.
    public static func throttleGroup(_ address: String) -> String {
        guard let bytes = bytes(address) else { return address }
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

/// An IP network in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`, or one address).
public struct IPNetwork: Sendable, Equatable, CustomStringConvertible {
    let prefix: [UInt8]
    let length: Int
    public let description: String

    /// Parses `address/length` or a single address; `nil` when it is neither.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let bytes = ClientAddress.bytes(parts[0]) else { return nil }
        let bits = bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length), parts[1].allSatisfy(\.isNumber) else { return nil }
            self.length = length
        } else {
            self.length = bits
        }
        self.prefix = bytes
        self.description = text
    }

    /// Whether `address` lies in this network.
    public func contains(_ address: String) -> Bool {
        guard let bytes = ClientAddress.bytes(address), bytes.count == prefix.count else { return false }
        var remaining = length
        for index in prefix.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != prefix[index] & mask { return false }
            remaining -= bits
        }
        return true
    }
}
