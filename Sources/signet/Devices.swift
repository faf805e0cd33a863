// `signet ca list|rotate` and `signet devices list`.
import ArgumentParser
import Foundation
import SignetServer

struct DeviceCA: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca", abstract: "List and rotate the device CA that issues app installations' client certificates.", subcommands: [List.self, Rotate.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the trusted device CAs, newest (issuing) first.")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let authorities = try await store.withStore { try await DeviceAuthorities(store: $0).trustedRecords() }
            if authorities.isEmpty { print("No device CA yet: one is made at the first activation (or with `signet ca rotate`).") }
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
    static let configuration = CommandConfiguration(abstract: "A user's activated app installations.", subcommands: [List.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a user's devices: instance id, client, status, certificate expiry.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String

        func run() async throws {
            let devices = try await store.withStore { store -> [DeviceRecord] in
                guard let user = try await store.user(username: username.lowercased()) else { throw ValidationError("no user named \(username)") }
                return try await store.devices(userID: user.id)
            }
            if devices.isEmpty { print("No devices.") }
            let formatter = ISO8601DateFormatter()
            for device in devices {
                print(
                    "\(device.instanceID)\t\(device.clientID)\t\(device.revokedAt == nil ? "activated" : "revoked")\tcertificate until \(formatter.string(from: device.certificateNotAfter))\tattestation \(device.attestation)")
            }
        }
    }
}
