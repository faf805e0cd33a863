// `signet outbox`: the messages the development outbox holds.
import ArgumentParser
import Foundation
import SignetServer

struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the SMS messages the development outbox holds (when no SMS gateway is configured).")

    @OptionGroup var store: StoreOptions
    @Option(help: "Show only the last N messages.") var last: Int = 10

    func run() async throws {
        let messages = try DevelopmentOutbox.read(dataDirectory: try await store.location().dataURL)
        if messages.isEmpty { print("The outbox is empty.") }
        let formatter = ISO8601DateFormatter()
        for message in messages.suffix(max(1, last)) {
            print(
                "\(formatter.string(from: message.createdAt))  to \(message.to)  (\(message.purpose))\n  \(message.body.replacingOccurrences(of: "\n", with: "\n  "))"
            )
        }
    }
}
