// What happens to an activated device after activation, and the trail it leaves.
import Foundation
import Logging
import SignetCore
import SignetStore

/// Who acted on a device, as the audit trail records it.
public enum DeviceActor: String, Sendable {
    /// The app, with the device's certificate.
    case device
    /// The user, with a login.
    case user
    /// A helpdesk, with the `signet` command.
    case admin
}

/// Revokes devices and records every device event: a stored audit event, a log line, and a
/// notice to the user by the message sender for the events a stranger could cause
/// (activation, removal, lock).
///
/// One component for the endpoints and the `signet devices` commands, so a lock from the
/// helpdesk and one from the app do the same.
public struct DeviceLifecycle: Sendable {
    /// Devices revoked, their audit events, and the owner and app a notice names.
    let store: any DeviceStore & AuditStore & UserStore & ClientStore
    let clock: SignetClock
    let random: SecureRandom
    let logger: Logger
    /// Delivers the user's notices; `nil` sends none (e.g. a command with no sender configured).
    let messages: (any MessageSender)?

    public init(
        store: any DeviceStore & AuditStore & UserStore & ClientStore, clock: SignetClock, random: SecureRandom, logger: Logger,
        messages: (any MessageSender)?
    ) {
        self.store = store
        self.clock = clock
        self.random = random
        self.logger = logger
        self.messages = messages
    }

    /// The longest reason kept.
    public static let maximumReasonLength = 200

    /// Revokes the device — its certificate, grants and refresh tokens at once, and its bound
    /// access tokens at their next use — and records why. `nil` when it is unknown or was
    /// already revoked (of concurrent revocations exactly one records an event).
    @discardableResult
    public func revoke(
        instanceID: String, because reason: DeviceRevocationReason, by actor: DeviceActor, note: String? = nil, replacedBy: String? = nil
    ) async throws -> DeviceRecord? {
        guard let revoked = try await store.revokeDevice(instanceID: instanceID, reason: reason, replacedBy: replacedBy, at: clock.now()) else {
            return nil
        }
        try await record("device.\(reason.rawValue)", device: revoked, by: actor, note: note)
        return revoked
    }

    /// The device as it stands now: a device replaced by reactivation lives on under its
    /// successor's instance id, so a lock or removal of the id the user or helpdesk knows reaches
    /// the live one (a thief who reactivated cannot shake a lock off that way).
    public func current(_ device: DeviceRecord) async throws -> DeviceRecord {
        var device = device
        for _ in 0..<32 {
            guard device.revocationReason == .replaced, let next = device.replacedBy, let successor = try await store.device(instanceID: next) else {
                break
            }
            device = successor
        }
        return device
    }

    /// Stores an audit event about `device`, logs it, and tells the user when a stranger could have caused it.
    public func record(_ kind: String, device: DeviceRecord, by actor: DeviceActor, note: String? = nil) async throws {
        let reason = note.map { String($0.prefix(Self.maximumReasonLength)) }
        try await store.appendAuditEvent(
            AuditEventRecord(
                id: random.token(byteCount: 16), at: clock.now(), kind: kind, userID: device.userID, clientID: device.clientID, actor: actor.rawValue,
                target: device.instanceID, reason: reason))
        logger.info(
            "device event",
            metadata: [
                "event": .string(kind), "actor": .string(actor.rawValue), "client_id": .string(device.clientID), "sub": .string(device.userID),
                "instance_id": .string(device.instanceID), "serial": .string(device.certificateSerial),
            ])
        if let notice = Self.notice(for: kind) { await notify(device, notice, purpose: kind) }
    }

    /// What the user is told, for the events they should hear about.
    static func notice(for kind: String) -> String? {
        switch kind {
        case "device.activated": "A new device was activated for %@. If it was not you, contact support."
        case "device.removed": "A device was removed from your %@ account."
        case "device.locked": "A device was locked for %@: it can no longer sign in."
        case "authenticator.registered":
            "A new way to sign in (PIN, fingerprint or face) was added to a device for %@. If it was not you, contact support."
        case "authenticator.pin_locked_out": "Too many wrong PINs: the PIN was removed from a device for %@."
        default: nil
        }
    }

    /// Sends a notice to the user's phone, when they have one. A failed delivery is logged; the event stands.
    private func notify(_ device: DeviceRecord, _ template: String, purpose: String) async {
        guard let messages, let user = try? await store.user(id: device.userID), let phone = user.phoneNumber else { return }
        let clientName = (try? await store.client(id: device.clientID))?.name ?? device.clientID
        let message = OutgoingMessage(
            id: random.token(byteCount: 16), to: phone, body: template.replacingOccurrences(of: "%@", with: clientName), purpose: purpose,
            createdAt: clock.now())
        do { try await messages.send(message) } catch {
            logger.warning(
                "device notice failed", metadata: ["event": "device.notice_failed", "error": .string(String(describing: type(of: error)))])
        }
    }
}
