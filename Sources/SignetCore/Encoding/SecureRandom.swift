// Random identifiers and secrets from the system's secure generator.
import Foundation

/// Generates unguessable values: opaque tokens, codes, state and nonces.
///
/// A value type so it can be passed in, per Signet's habit of injecting
/// randomness; the default uses the system's cryptographic generator.
public struct SecureRandom: Sendable {
    private let fill: @Sendable (Int) -> [UInt8]

    /// The system's cryptographic generator.
    public init() {
        self.fill = { count in
            var bytes = [UInt8](repeating: 0, count: count)
            bytes.withUnsafeMutableBytes { SystemEntropy.fill($0) }
            return bytes
        }
    }

    /// A generator with a custom byte source, for tests.
    public init(bytes: @escaping @Sendable (Int) -> [UInt8]) { self.fill = bytes }

    /// `count` random bytes.
    public func bytes(_ count: Int) -> [UInt8] { fill(count) }

    /// A base64url token carrying `byteCount` random bytes (32 bytes = 256 bits by default).
    public func token(byteCount: Int = 32) -> String { Data(bytes(byteCount)).base64URLEncodedString() }
}
