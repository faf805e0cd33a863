// A free loopback port, for starting server processes in tests and benchmarks.
import SignetCore

#if canImport(Glibc)
    import Glibc
#endif

/// Finds a free loopback port by binding port 0 and reading what the kernel chose.
public enum FreePort {
    /// A port nobody listened on a moment ago (another process could still take it).
    public static func find() throws -> Int {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw SignetError(.transportFailure, "cannot open a socket") }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard bound else { throw SignetError(.transportFailure, "cannot bind a loopback port") }
            return Int(UInt16(bigEndian: address.sin_port))
        #else
            return Int.random(in: 20_000..<60_000)
        #endif
    }
}
