// Everything the provider stores, as small protocols by capability. SignetStorage implements
// them in SQL; MemoryStore implements them in memory for fast tests.
import Foundation

/// Removal of what has expired.
public protocol ExpiryStore: Sendable {
    func purgeExpired(before: Date) async throws
}

/// Whether the store can serve (`/health/ready`).
public protocol ReadinessStore: Sendable {
    /// `nil` when the store answers a query and its schema is at the version this build expects;
    /// otherwise why not, in words fit for an operator (no data). Does not throw: a failure is a reason.
    func unreadiness() async -> String?
}

/// When writes reach the disk.
public protocol WriteDurabilityStore: Sendable {
    /// Runs `body`, the answering of one request. Its writes may be reported done once committed.
    /// If one of them binds (``WriteBinding``), all of them, and every commit made before the end,
    /// are on disk before this returns or throws, so no answer tells of a binding write that a
    /// crash could still undo, and the writes of one request (and of its neighbours) share one
    /// flush. An answer that made no binding write does not wait.
    func durableWrites<T>(_ body: () async throws -> T) async throws -> T
}

/// Everything the provider stores.
public typealias SignetStore = ClientStore & UserStore & SigningKeyStore & GrantStore & SessionStore & ReplayStore
    & ThrottleStore & ExpiryStore & RememberTokenStore & SecretStore & LimitStore & PushedRequestStore & DeviceStore & AuditStore & AuthenticatorStore
    & ApprovalStore & ReadinessStore & WriteDurabilityStore
