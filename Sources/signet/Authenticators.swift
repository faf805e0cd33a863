// `signet authenticators list|remove` for helpdesks.
import ArgumentParser
import Foundation
import SignetCore
import SignetServer
import SignetStore

struct Authenticators: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A user's FIDO UAF authenticators (PIN, fingerprint, face, passcode on their devices): list, remove.",
        subcommands: [List.self, Remove.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a user's authenticators: KeyID, AAID, kind, device, PIN failures, last use.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String

        func run() async throws {
            let authenticators = try await store.withStore { store in
                try await store.authenticators(userID: try await Devices.user(username, in: store).id)
            }
            if authenticators.isEmpty { print("No authenticators.") }
            let formatter = ISO8601DateFormatter()
            for authenticator in authenticators {
                let kind = AuthenticatorCatalog.kind(authenticator.aaid)?.name ?? "unknown"
                let pin = authenticator.pinKey == nil ? "" : "\tPIN failures \(authenticator.pinFailures)"
                let clone = authenticator.cloneSuspectedAt == nil ? "" : "\tREFUSED: counter went backwards (possibly cloned)"
                print(
                    "\(authenticator.keyID)\t\(authenticator.aaid) \(kind)\tdevice \(authenticator.instanceID)\tlast used \(authenticator.lastUsedAt.map { formatter.string(from: $0) } ?? "never")\(pin)\(clone)"
                )
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a user's authenticator (or all with --all): its next use fails and the app must register again.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String
        @Argument(help: "The KeyID (from `signet authenticators list`).") var keyID: String?
        @Flag(help: "Remove every authenticator of the user.") var all = false
        @Option(help: "Why (kept in the audit trail).") var reason: String

        func validate() throws {
            guard (keyID == nil) == all else { throw ValidationError("name one KeyID, or --all") }
        }

        func run() async throws {
            let settings = try await self.store.settings()
            let removed = try await store.withStore { store -> [AuthenticatorRecord] in
                let user = try await Devices.user(username, in: store)
                let lifecycle = try Devices.lifecycle(store, settings: settings)
                let chosen = try await store.authenticators(userID: user.id).filter { all || $0.keyID == keyID }
                guard !chosen.isEmpty else { throw ValidationError("\(username) has no such authenticator") }
                var removed: [AuthenticatorRecord] = []
                for authenticator in chosen {
                    guard let gone = try await store.deleteAuthenticator(id: authenticator.id) else { continue }
                    removed.append(gone)
                    if let device = try await store.device(instanceID: gone.instanceID) {
                        try await lifecycle.record("authenticator.removed", device: device, by: .admin, note: "\(gone.aaid): \(reason)")
                    }
                }
                return removed
            }
            print("Removed \(removed.count) authenticator(s): \(removed.map { "\($0.aaid) \($0.keyID)" }.joined(separator: ", "))")
        }
    }
}
