// The one audit trail: stored events about logins, tokens, consents, devices and administration.
import Foundation
import Logging
import ServiceLifecycle
import SignetCore
import SignetStore

/// Who acted, as the audit trail records it.
public enum AuditActor: String, Sendable {
    /// The user, through a login page, an app or a device.
    case user
    /// A client (a relying party's backend) on its own behalf.
    case client
    /// An app installation, with its device key.
    case device
    /// An administrator, through `signet` or the admin API.
    case admin
    /// Signet itself (expiry, limits).
    case system
}

/// Writes audit events to the store (and a log line each): the record `signet audit` reads.
///
/// Events never carry secrets: a kind, the user, the client, the actor, a target id and a
/// short reason. Device events (``DeviceLifecycle``) go to this same trail.
public struct AuditTrail: Sendable {
    let store: any AuditStore
    let clock: SignetClock
    let random: SecureRandom
    let logger: Logger

    public init(store: any AuditStore, clock: SignetClock = .system, random: SecureRandom = SecureRandom(), logger: Logger) {
        (self.store, self.clock, self.random, self.logger) = (store, clock, random, logger)
    }

    /// The longest reason kept.
    public static let maximumReasonLength = 200

    /// Stores one event and logs it.
    public func record(
        _ kind: String, userID: String? = nil, clientID: String? = nil, actor: AuditActor, target: String? = nil, reason: String? = nil
    ) async throws {
        let event = AuditEventRecord(
            id: random.token(byteCount: 16), at: clock.now(), kind: kind, userID: userID, clientID: clientID, actor: actor.rawValue, target: target,
            reason: reason.map { String($0.prefix(Self.maximumReasonLength)) })
        try await store.appendAuditEvent(event)
        // The line's fields are built only when it will be written.
        guard logger.logLevel <= .info else { return }
        var metadata: Logger.Metadata = ["event": .string(kind), "actor": .string(actor.rawValue)]
        if let userID { metadata["sub"] = .string(userID) }
        if let clientID { metadata["client_id"] = .string(clientID) }
        if let reason = event.reason { metadata["reason"] = .string(reason) }
        logger.info("audit", metadata: metadata)
    }
}

/// Removes audit events older than the retention setting, once an hour.
public struct AuditRetentionService: Service {
    let store: any AuditStore
    let retention: TimeInterval
    let clock: SignetClock
    let logger: Logger

    public init(store: any AuditStore, retention: TimeInterval, clock: SignetClock = .system, logger: Logger) {
        (self.store, self.retention, self.clock, self.logger) = (store, retention, clock, logger)
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do {
                        let removed = try await store.purgeAuditEvents(before: clock.now().addingTimeInterval(-retention))
                        if removed > 0 { logger.info("audit events past retention removed", metadata: ["count": .stringConvertible(removed)]) }
                    } catch {
                        logger.warning("audit retention failed", metadata: ["error": .string(String(describing: type(of: error)))])
                    }
                    try await Task.sleep(for: .seconds(3600))
                }
            }
        } catch is CancellationError {
            // Shutdown: nothing to finish.
        }
    }
}
