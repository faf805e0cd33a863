// `signet ca list|rotate` and `signet devices list|remove|lock|events` for helpdesks.
import ArgumentParser
import Foundation
import Logging
import SignetCore
import SignetServer
import SignetStore

struct DeviceCA: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca", abstract: "List and rotate the device CA that issues app installations' client certificates.",
        subcommands: [List.self, Rotate.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the trusted device CAs, newest (issuing) first.")
        @OptionGroup var store: StoreOptions
        @Option(help: "Days a device certificate is valid, as the server is configured (env SIGNET_DEVICE_CERTIFICATE_DAYS). Default 90")
        var deviceCertificateDays: Int?

        func run() async throws {
            let settings = try await store.settings(adding: deviceCertificateDays.map { [.deviceCertificateDays: .integer($0)] } ?? [:])
            let days = try settings.positive(.deviceCertificateDays) ?? 90
            let authorities = try await store.withStore {
                try await DeviceAuthorities(store: $0, certificateValidity: TimeInterval(days) * 86_400).trustedRecords()
            }
            if authorities.isEmpty { print("No device CA yet: `signet serve` makes one when it starts (or use `signet ca rotate`).") }
            let formatter = ISO8601DateFormatter()
            for (index, authority) in authorities.enumerated() {
                print("\(authority.id)\t\(index == 0 ? "issuing" : "trusted")\tvalid until \(formatter.string(from: authority.notAfter))")
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new device CA that issues from now on; the older ones stay trusted until they expire.")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let made = try await store.withStore { try await DeviceAuthorities(store: $0).rotate() }
            print("Now issuing device certificates with CA \(made.fingerprint)")
        }
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A user's activated app installations: list, remove, lock a lost one, and their audit trail.",
        subcommands: [List.self, Remove.self, Lock.self, Events.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's devices: instance id, client, status, name, certificate expiry, last use.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String

        func run() async throws {
            let devices = try await store.withStore { store -> [DeviceRecord] in
                try await store.devices(userID: try await Devices.user(username, in: store).id)
            }
            if devices.isEmpty { print("No devices.") }
            let formatter = ISO8601DateFormatter()
            for device in devices {
                let lastUse = device.lastUsedAt.map { formatter.string(from: $0) } ?? "never"
                print(
                    "\(device.instanceID)\t\(device.clientID)\t\(device.status)\t\(device.name ?? "-")\tcertificate until \(formatter.string(from: device.certificateNotAfter))\tlast used \(lastUse)\tattestation \(device.attestation)"
                )
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a device: its certificate, grants and tokens are revoked at once on every instance; the user is told.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The device's instance id.") var instanceID: String
        @Option(help: "Why (kept in the audit trail).") var reason: String

        func run() async throws {
            let settings = try await self.store.settings()
            let removed = try await store.withStore { store -> DeviceRecord? in
                let lifecycle = try Devices.lifecycle(store, settings: settings)
                guard let known = try await store.device(instanceID: instanceID) else { return nil }
                // A reactivated device lives on under its successor's id.
                return try await lifecycle.revoke(
                    instanceID: try await lifecycle.current(known).instanceID, because: .removed, by: .admin, note: reason)
            }
            guard let removed else { throw ValidationError("no device \(instanceID) that is not revoked already") }
            print("Removed \(removed.instanceID) (\(removed.clientID)).")
        }
    }

    struct Lock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lock a lost or stolen device, or every device of a user: certificates, grants and tokens revoked at once; the user is told.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "A username (all their devices) or a device's instance id.") var target: String
        @Option(help: "Why (kept in the audit trail).") var reason: String

        func run() async throws {
            let settings = try await self.store.settings()
            let locked = try await store.withStore { store -> [DeviceRecord] in
                let lifecycle = try Devices.lifecycle(store, settings: settings)
                var locked: [DeviceRecord] = []
                if let device = try await store.device(instanceID: target) {
                    let live = try await lifecycle.current(device)
                    if let revoked = try await lifecycle.revoke(instanceID: live.instanceID, because: .locked, by: .admin, note: reason) {
                        locked.append(revoked)
                    }
                } else if let user = try await store.user(username: target.lowercased()) {
                    // Listed again until none is left: a reactivation meanwhile makes a new device.
                    for _ in 0..<8 {
                        let active = try await store.devices(userID: user.id).filter { $0.revokedAt == nil }
                        if active.isEmpty { break }
                        for device in active {
                            if let revoked = try await lifecycle.revoke(instanceID: device.instanceID, because: .locked, by: .admin, note: reason) {
                                locked.append(revoked)
                            }
                        }
                    }
                } else {
                    throw ValidationError("no user or device named \(target)")
                }
                return locked
            }
            print(
                locked.isEmpty
                    ? "Nothing to lock: no device that is not revoked already."
                    : "Locked \(locked.count) device(s): \(locked.map(\.instanceID).joined(separator: ", "))")
        }
    }

    struct Events: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A user's device events, newest first: time, event, actor, device, reason.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String
        @Option(help: "At most this many.") var limit = 100

        func run() async throws {
            // The device and authenticator events of the one audit trail (`signet audit` shows all of it).
            let events = try await store.withStore { store in
                try await store.auditEvents(AuditQuery(userID: try await Devices.user(username, in: store).id, limit: 10_000))
                    .filter { $0.kind.hasPrefix("device.") || $0.kind.hasPrefix("authenticator.") }.prefix(max(1, min(limit, 10_000)))
            }
            if events.isEmpty { print("No events.") }
            let formatter = ISO8601DateFormatter()
            for event in events {
                print("\(formatter.string(from: event.at))\t\(event.kind)\t\(event.actor)\t\(event.target ?? "-")\t\(event.reason ?? "")")
            }
        }
    }

    static func user(_ username: String, in store: some SignetStore) async throws -> UserRecord {
        guard let user = try await store.user(username: username.lowercased()) else { throw ValidationError("no user named \(username)") }
        return user
    }

    /// Revocations from the command: the user is told through the configured sender (webhook, else the development outbox).
    static func lifecycle(_ store: some SignetStore, settings: Settings) throws -> DeviceLifecycle {
        var logger = Logger(label: "signet.devices")
        logger.logLevel = .warning
        return DeviceLifecycle(
            store: store, clock: .system, random: SecureRandom(), logger: logger,
            messages: try MessageSenders.configured(
                webhookURL: settings.string(.smsWebhookURL), webhookSecret: settings.string(.smsWebhookSecret),
                dataDirectory: StoreLocation(settings: settings).dataURL, printing: false))
    }
}
