// Bytes from the operating system's cryptographic generator, one system call per value.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The operating system's generator, asked once for all the bytes of a value.
///
/// `SystemRandomNumberGenerator` hands out eight bytes per call, and on Linux each call is one
/// `getrandom` system call: four for a 32-byte token, about ten per token request. Linux's
/// `getrandom(2)` is looked up at run time because Swift's Glibc module does not declare it (and
/// `arc4random_buf` needs glibc 2.36); without it the standard generator is used. swift-crypto's
/// generator (`SymmetricKey(size:)`, BoringSSL's) is no better here: it measured 14 `getrandom`
/// calls per token request, against 4 with this (`perf stat -e syscalls:sys_enter_getrandom`).
enum SystemEntropy {
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let start = buffer.baseAddress, !buffer.isEmpty else { return }
        #if canImport(Darwin)
            arc4random_buf(start, buffer.count)
        #else
            if let getrandom = linuxGetrandom {
                var offset = 0
                while offset < buffer.count {
                    let got = getrandom(start + offset, buffer.count - offset, 0)
                    if got > 0 {
                        offset += got
                    } else if got < 0, errno == EINTR {
                        continue
                    } else {
                        // ENOSYS (an old kernel, a seccomp filter): the standard generator, which
                        // falls back to /dev/urandom, fills the rest.
                        break
                    }
                }
                if offset == buffer.count { return }
                fillWithStandardGenerator(UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]))
                return
            }
            fillWithStandardGenerator(buffer)
        #endif
    }

    #if !canImport(Darwin)
        private static func fillWithStandardGenerator(_ buffer: UnsafeMutableRawBufferPointer) {
            var generator = SystemRandomNumberGenerator()
            for index in buffer.indices { buffer[index] = generator.next() }
        }

        private typealias Getrandom = @convention(c) (UnsafeMutableRawPointer?, Int, UInt32) -> Int

        /// glibc's (2.25 and later) `getrandom`, or `nil`.
        private static let linuxGetrandom: Getrandom? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "getrandom") else { return nil }
            return unsafeBitCast(symbol, to: Getrandom.self)
        }()
    #endif
}
