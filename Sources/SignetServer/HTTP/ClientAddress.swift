// Client addresses as throttling sees them: one IPv4 address, or one IPv6 /64.
import NIOCore

/// How an address is grouped for per-address limits.
public enum ClientAddress {
    /// The group an address is counted in: an IPv4 address as it is; an IPv6 address by its
    /// /64 prefix (one subscriber usually holds a whole /64, so counting single IPv6 addresses
    /// would give an attacker 2^64 fresh budgets); an IPv4-mapped IPv6 address as its IPv4.
    /// Anything that does not parse is counted as itself.
    public static func throttleGroup(_ address: String) -> String {
        guard let parsed = try? SocketAddress(ipAddress: address, port: 0) else { return address }
        switch parsed {
        case .v4:
            return parsed.ipAddress ?? address
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
                return bytes[12..<16].map(String.init).joined(separator: ".")
            }
            let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        default:
            return address
        }
    }
}
