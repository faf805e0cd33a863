// The provider's own keys and secrets and where they are kept.
import Foundation

/// A signing key of the provider and where it is in its life.
public struct SigningKeyRecord: Sendable, Equatable {
    /// next: published, not yet signing. active: signing. retired: published until its tokens expire.
    public enum Status: String, Sendable, Codable { case next, active, retired }

    public var kid: String
    public var algorithm: String
    /// The private key, PEM (PKCS#8).
    public var privateKeyPEM: String
    public var status: Status
    public var createdAt: Date
    /// When a retired key may leave the JWKS: retirement plus the longest token lifetime.
    public var publishUntil: Date?
    /// When it began to sign; `nil` for a key that never has, or one stored before this was
    /// recorded (its `createdAt` stands in).
    public var activatedAt: Date?

    public init(kid: String, algorithm: String = "ES256", privateKeyPEM: String, status: Status, createdAt: Date, publishUntil: Date? = nil) {
        self.kid = kid
        self.algorithm = algorithm
        self.privateKeyPEM = privateKeyPEM
        self.status = status
        self.createdAt = createdAt
        self.publishUntil = publishUntil
    }
}

/// The provider's own signing keys.
public protocol SigningKeyStore: Sendable {
    func signingKeys() async throws -> [SigningKeyRecord]
    func insertSigningKey(_ key: SigningKeyRecord) async throws
    /// Sets a key's status and publication end, and its activation time when `activatedAt` is
    /// given (else it keeps the one it has).
    func updateSigningKey(kid: String, status: SigningKeyRecord.Status, publishUntil: Date?, activatedAt: Date?) async throws
    func deleteSigningKey(kid: String) async throws
}

extension SigningKeyStore {
    /// ``updateSigningKey(kid:status:publishUntil:activatedAt:)`` keeping the activation time.
    public func updateSigningKey(kid: String, status: SigningKeyRecord.Status, publishUntil: Date?) async throws {
        try await updateSigningKey(kid: kid, status: status, publishUntil: publishUntil, activatedAt: nil)
    }
}

/// Named secrets the provider makes for itself (such as the OTP hashing key).
public protocol SecretStore: Sendable {
    /// The secret called `name`, storing `candidate` first if there is none yet; every instance gets the same value.
    func secret(named name: String, orStore candidate: String) async throws -> String
}

extension SigningKeyRecord.Status: StoredValue {}

extension SigningKeyRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: SigningKeyRecord(kid: "", privateKeyPEM: "", status: .retired, createdAt: .distantPast),
        [
            .member("kid", \.kid), .member("algorithm", \.algorithm), .member("privateKeyPEM", \.privateKeyPEM), .member("status", \.status),
            .member("createdAt", \.createdAt), .member("publishUntil", \.publishUntil), .member("activatedAt", \.activatedAt),
        ])
}
