// `signet keys list|rotate`.
import ArgumentParser
import Foundation
import SignetServer

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List and rotate the provider's signing keys.", subcommands: [List.self, Rotate.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List signing keys: next (published), active (signing), retired (published until its tokens expire).")
        @OptionGroup var store: StoreOptions
        @Option(help: "text or json.") var output: OutputFormat = .text

        func run() async throws {
            let keys = try await store.withStore { try await $0.signingKeys() }
            if output == .json {
                return try OutputFormat.printJSON(keys.map(KeyView.init))
            }
            if keys.isEmpty { print("No keys yet: they are created on the first `signet serve`.") }
            let formatter = ISO8601DateFormatter()
            for key in keys {
                let until = key.publishUntil.map { " published until \(formatter.string(from: $0))" } ?? ""
                print("\(key.kid)\t\(key.algorithm)\t\(key.status.rawValue)\tcreated \(formatter.string(from: key.createdAt))\(until)")
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start signing with the next key (already published), publish a new next key, retire the old one.",
            discussion: "Running servers pick the change up within a minute (they reread keys every 60 s).")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let configuration = try SignetConfiguration.provider(try await store.settings(adding: [:]))
            let kid = try await store.withStore { store in
                try await SignetAdmin(store: store, passwordHashCost: 4).rotateKeys(configuration: configuration)
            }
            print("Now signing with \(kid)")
        }
    }
}
