// The audit trail as stored.
import Foundation
import SignetCore

/// One entry of the audit trail: who did what to whom, when and why.
///
/// Stored, not only logged (`signet devices events USER`); the operations issue adds the
/// other kinds of event to this same trail.
public struct AuditEventRecord: Sendable, Equatable {
    public var id: String
    public var at: Date
    /// What happened, e.g. `device.activated`, `device.locked`.
    public var kind: String
    /// Whose account it concerns.
    public var userID: String?
    public var clientID: String?
    /// Who did it: `device`, `user`, `admin` or `system`.
    public var actor: String
    /// What it was done to, e.g. the instance id.
    public var target: String?
    /// Why, as given by the actor (free text, at most 200 characters).
    public var reason: String?

    public init(id: String, at: Date, kind: String, userID: String?, clientID: String?, actor: String, target: String?, reason: String?) {
        self.id = id
        self.at = at
        self.kind = kind
        self.userID = userID
        self.clientID = clientID
        self.actor = actor
        self.target = target
        self.reason = reason
    }
}

/// The audit trail.
public protocol AuditStore: Sendable {
    func appendAuditEvent(_ event: AuditEventRecord) async throws
    /// A user's events, newest first, at most `limit`.
    func auditEvents(userID: String, limit: Int) async throws -> [AuditEventRecord]
    /// The events `query` selects, newest first.
    func auditEvents(_ query: AuditQuery) async throws -> [AuditEventRecord]
    /// Removes the events older than `cutoff` (the retention setting); how many went.
    func purgeAuditEvents(before cutoff: Date) async throws -> Int
}

/// Which audit events to read (`signet audit`, the admin API).
public struct AuditQuery: Sendable, Equatable {
    public var userID: String?
    public var clientID: String?
    /// Only events at or after this time.
    public var since: Date?
    /// At most this many, newest first.
    public var limit: Int

    public init(userID: String? = nil, clientID: String? = nil, since: Date? = nil, limit: Int = 100) {
        (self.userID, self.clientID, self.since, self.limit) = (userID, clientID, since, limit)
    }

    /// Whether `event` is one of these.
    public func matches(_ event: AuditEventRecord) -> Bool {
        (userID == nil || event.userID == userID) && (clientID == nil || event.clientID == clientID) && (since.map { event.at >= $0 } ?? true)
    }
}

extension AuditEventRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: AuditEventRecord(id: "", at: .distantPast, kind: "", userID: nil, clientID: nil, actor: "", target: nil, reason: nil),
        [
            .member("id", \.id), .member("at", \.at), .member("kind", \.kind), .member("userID", \.userID), .member("clientID", \.clientID),
            .member("actor", \.actor), .member("target", \.target), .member("reason", \.reason),
        ])
}
