// `signet users add|list|remove|set-password`.
import ArgumentParser
import Foundation
import SignetCore
import SignetServer

struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, list, remove, lock and unlock users, and set passwords.",
        subcommands: [Add.self, List.self, Show.self, Update.self, Remove.self, SetPassword.self, Lock.self, Unlock.self, ForgetDevices.self])

    /// The password from --password-stdin, or a prompt-free error.
    static func readPassword(fromStandardInput: Bool, given: String?) throws -> String {
        if let given { return given }
        guard fromStandardInput, let line = Swift.readLine(strippingNewline: true), !line.isEmpty else {
            throw ValidationError("give the password with --password-stdin (recommended) or --password")
        }
        return line
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user.")
        @OptionGroup var store: StoreOptions
        @OptionGroup var provider: ProviderOptions
        @Argument(help: "The username.") var username: String
        @Flag(help: "Read the password from standard input.") var passwordStdin = false
        @Option(help: "The password (visible in the process list; prefer --password-stdin).") var password: String?
        @Option(help: "Full name.") var name: String?
        @Option(help: "Email address.") var email: String?
        @Option(help: "Verified phone number (E.164).") var phone: String?

        func run() async throws {
            let password = try Users.readPassword(fromStandardInput: passwordStdin, given: password)
            let cost = try SignetConfiguration.provider(try await store.settings(adding: provider.flagValues)).passwordHashCost
            let user = try await store.withStore { store in
                try await SignetAdmin(store: store, passwordHashCost: cost).addUser(
                    username: username, password: password, name: name, email: email, phoneNumber: phone)
            }
            print("Added user \(user.username) (sub \(user.id))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")
        @OptionGroup var store: StoreOptions
        @Option(help: "text or json.") var output: OutputFormat = .text

        func run() async throws {
            let users = try await store.withStore { try await $0.listUsers() }
            if output == .json { return try OutputFormat.printJSON(users.map(UserView.init)) }
            if users.isEmpty { print("No users.") }
            for user in users { print("\(user.username)\t\(user.id)\t\(user.name ?? "")\t\(user.email ?? "")") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String

        func run() async throws {
            do {
                try await store.withStore { try await SignetAdmin(store: $0, passwordHashCost: 4).removeUser(username: username) }
            } catch let error as SignetError where error.code == .notFound {
                throw ValidationError("no user \(username)")
            }
            print("Removed user \(username); their sessions, grants, refresh tokens and remember tokens are revoked")
        }
    }

    struct Lock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lock a user: they cannot sign in, and every session, grant, refresh token and remember token of theirs is revoked.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String

        func run() async throws { try await Users.setLocked(true, username: username, store: store) }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unlock a locked user.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String

        func run() async throws { try await Users.setLocked(false, username: username, store: store) }
    }

    static func setLocked(_ locked: Bool, username: String, store: StoreOptions) async throws {
        do {
            try await store.withStore { try await SignetAdmin(store: $0, passwordHashCost: 4).setLocked(username: username, locked) }
        } catch let error as SignetError where error.code == .notFound {
            throw ValidationError("no user \(username)")
        }
        print("\(locked ? "Locked" : "Unlocked") user \(username)")
    }

    struct SetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-password", abstract: "Set a user's password.")
        @OptionGroup var store: StoreOptions
        @OptionGroup var provider: ProviderOptions
        @Argument(help: "The username.") var username: String
        @Flag(help: "Read the password from standard input.") var passwordStdin = false
        @Option(help: "The password (prefer --password-stdin).") var password: String?

        func run() async throws {
            let password = try Users.readPassword(fromStandardInput: passwordStdin, given: password)
            let cost = try SignetConfiguration.provider(try await store.settings(adding: provider.flagValues)).passwordHashCost
            try await store.withStore { store in
                try await SignetAdmin(store: store, passwordHashCost: cost).setPassword(username: username, password: password)
            }
            print("Password set for \(username)")
        }
    }

    struct ForgetDevices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget-devices", abstract: "Revoke every Remember-User-ID token of a user (devices must then ask for the username again).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String

        func run() async throws {
            let count = try await store.withStore { store in
                try await SignetAdmin(store: store, passwordHashCost: 4).forgetDevices(username: username)
            }
            print("Revoked \(count) remember token\(count == 1 ? "" : "s") of \(username)")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user (never the password hash).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String
        @Option(help: "text or json.") var output: OutputFormat = .text

        func run() async throws {
            guard let user = try await store.withStore({ try await $0.user(username: username.lowercased()) }) else {
                throw ValidationError("no user \(username)")
            }
            let view = UserView(user)
            switch output {
            case .json: try OutputFormat.printJSON(view)
            case .text:
                print("username  \(view.username)\nid        \(view.id)\nname      \(view.name ?? "")\nemail     \(view.email ?? "")")
                print(
                    "phone     \(view.phoneNumber ?? "")\nlocked    \(view.locked)\ncreated   \(ISO8601DateFormatter().string(from: view.createdAt))")
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a user's name, email or phone (an empty value removes it). A new phone ends their sessions and grants.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The username.") var username: String
        @Option(help: "Full name.") var name: String?
        @Option(help: "Email address.") var email: String?
        @Option(help: "Verified phone number (E.164).") var phone: String?

        func validate() throws {
            guard name != nil || email != nil || phone != nil else { throw ValidationError("give --name, --email or --phone") }
        }

        func run() async throws {
            do {
                _ = try await store.withStore { store in
                    try await SignetAdmin(store: store, passwordHashCost: 4).updateUser(
                        username: username, .init(name: name, email: email, phoneNumber: phone))
                }
            } catch let error as SignetError where error.code == .notFound || error.code == .invalidConfiguration {
                throw ValidationError(error.reason)
            }
            print("Updated \(username)")
        }
    }

}
