// Rotates the signing keys by themselves, on every instance, once.
import Foundation
import Logging
import ServiceLifecycle
import SignetCore
import SignetStore

/// Checks the signing keys on a timer and carries out what ``KeyRotation/step(_:now:policy:)``
/// says: a next key announced, a rotation when the active key has signed for the rotation period.
///
/// Every instance runs one; of instances that decide the same rotation at once, one carries it out
/// (``KeyRotation/apply(_:keys:replays:now:retiredKeyPublicationTime:)``) and the others see it at
/// their next reread of the keys (``KeyRing``). Each change is an audit event (`keys.rotated`,
/// `keys.announced`, `keys.repaired`, actor `system`).
public struct KeyRotationService: Service {
    let keys: any SigningKeyStore
    let replays: any ReplayStore
    /// Read for the longest token lifetime a client has (how long a retired key stays published).
    let clients: any ClientStore
    let keyRing: KeyRing
    let audit: AuditTrail
    let policy: KeyRotationPolicy
    let configuration: SignetConfiguration
    let clock: SignetClock
    let logger: Logger
    /// How often the keys are checked.
    let interval: TimeInterval

    public init(
        keys: any SigningKeyStore, replays: any ReplayStore, clients: any ClientStore, keyRing: KeyRing, audit: AuditTrail, policy: KeyRotationPolicy,
        configuration: SignetConfiguration, clock: SignetClock, logger: Logger, interval: TimeInterval
    ) {
        (self.keys, self.replays, self.clients, self.keyRing, self.audit, self.policy) = (keys, replays, clients, keyRing, audit, policy)
        (self.configuration, self.clock, self.logger, self.interval) = (configuration, clock, logger, interval)
    }

    /// Checks the keys once: what changed, if anything (``KeyRotationStep``).
    @discardableResult
    public func checkOnce() async throws -> KeyRotationStep? {
        let now = clock.now()
        try await KeyRotation.dropExpired(keys: keys, now: now)
        let step = KeyRotation.step(try await keys.signingKeys(), now: now, policy: policy)
        guard step != .none else { return nil }
        let publication = configuration.retiredKeyPublicationTime(clients: try await clients.listClients())
        guard let done = try await KeyRotation.apply(step, keys: keys, replays: replays, now: now, retiredKeyPublicationTime: publication) else {
            return nil
        }
        try await keyRing.reload()
        switch done {
        case .rotate(let retiring, let promoting):
            logger.info("signing key rotated", metadata: ["event": "keys.rotated", "kid": .string(promoting), "retired": .string(retiring)])
            try await audit.record("keys.rotated", actor: .system, target: promoting)
        case .announce:
            try await audit.record("keys.announced", actor: .system)
        case .repair(let retired):
            logger.warning(
                "more than one signing key was active; the older ones are retired",
                metadata: ["event": "keys.repaired", "count": .stringConvertible(retired.count)])
            try await audit.record("keys.repaired", actor: .system, target: retired.joined(separator: " "))
        case .none:
            break
        }
        return done
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do { try await checkOnce() } catch {
                        logger.warning(
                            "key rotation check failed",
                            metadata: ["event": "keys.rotation_failed", "error": .string(String(describing: type(of: error)))])
                    }
                    try await Task.sleep(for: .seconds(interval))
                }
            }
        } catch is CancellationError {
            // Shutdown: nothing to finish.
        }
    }
}
