// Password hashing with bcrypt (hummingbird-auth), off the event loop.
import Foundation
import HummingbirdBcrypt
import NIOPosix

/// Hashes and checks passwords with bcrypt on NIO's blocking thread pool.
///
/// bcrypt because it is the memory-hard-enough, widely audited choice that the
/// recommended library set ships (hummingbird-auth); its cost is configurable so
/// operators can follow hardware. Passwords longer than 72 bytes are refused
/// rather than silently truncated, the one bcrypt pitfall.
public struct PasswordHasher: Sendable {
    /// bcrypt cost (log2 rounds).
    public let cost: Int
    /// The longest password bcrypt reads in full.
    public static let maxPasswordBytes = 72

    /// A hash of a random password, checked against when the account does not exist,
    /// so a missing account takes as long to refuse as a wrong password.
    private let decoyHash: String

    public init(cost: Int) {
        self.cost = cost
        self.decoyHash = Bcrypt.hash(UUID().uuidString, cost: UInt8(cost))
    }

    /// Hashes a password; throws when it is empty or longer than 72 bytes.
    public func hash(_ password: String) async throws -> String {
        guard Self.isAcceptable(password) else { throw PasswordRejected() }
        let cost = UInt8(self.cost)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`; with no hash, checks a decoy and returns false.
    public func verify(_ password: String, hash: String?) async -> Bool {
        guard Self.isAcceptable(password) else { return false }
        let target = hash ?? decoyHash
        let matches = (try? await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: target) }) ?? false
        return hash != nil && matches
    }

    /// Whether a password can be hashed: 1–72 bytes of UTF-8.
    public static func isAcceptable(_ password: String) -> Bool {
        (1...maxPasswordBytes).contains(password.utf8.count)
    }

    /// A password that cannot be used (empty or over 72 bytes).
    public struct PasswordRejected: Error, CustomStringConvertible {
        public var description: String { "a password must be 1 to 72 bytes long" }
    }
}
