// `signet audit`: read the audit trail.
import ArgumentParser
import Foundation
import SignetServer
import SignetStore

/// `--output text|json`, shared by the commands that list records.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json

    /// Prints `value` as indented JSON with sorted keys and ISO 8601 dates.
    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the audit trail, newest first: logins, tokens, devices and every administrative change.")

    @OptionGroup var store: StoreOptions
    @Option(help: "Only this user's events (username or user id).") var user: String?
    @Option(help: "Only this client's events.") var client: String?
    @Option(help: "Only events since then: an ISO 8601 time (2026-11-26T10:00:00Z) or an age (90m, 24h, 7d).") var since: String?
    @Option(help: "At most this many events (1–10000).") var limit: Int = 100
    @Option(help: "text or json.") var output: OutputFormat = .text

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be 1–10000") }
        if let since { _ = try Self.time(since, now: Date()) }
    }

    func run() async throws {
        let events = try await store.withStore { store -> [AuditEventRecord] in
            var query = AuditQuery(clientID: client, since: try since.map { try Self.time($0, now: Date()) }, limit: limit)
            if let user {
                var record = try await store.user(username: user.lowercased())
                if record == nil { record = try await store.user(id: user) }
                guard let record else { throw ValidationError("no user \(user)") }
                query.userID = record.id
            }
            return try await store.auditEvents(query)
        }
        switch output {
        case .json: try OutputFormat.printJSON(events)
        case .text:
            if events.isEmpty { print("No events.") }
            let formatter = ISO8601DateFormatter()
            for event in events {
                let fields = [
                    formatter.string(from: event.at), event.kind, "actor=\(event.actor)", event.userID.map { "user=\($0)" },
                    event.clientID.map { "client=\($0)" },
                    event.target.map { "target=\($0)" }, event.reason.map { "reason=\($0)" },
                ]
                print(Self.printable(fields.compactMap { $0 }.joined(separator: "  ")))
            }
        }
    }

    /// The text with control characters shown as `?`, so no stored value can move the terminal's cursor or forge a line.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }

    /// An ISO 8601 time, or an age before `now` (`90m`, `24h`, `7d`).
    static func time(_ text: String, now: Date) throws -> Date {
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int(text.dropLast()), count >= 0 else {
            throw ValidationError("--since must be an ISO 8601 time or an age such as 90m, 24h or 7d, not '\(text)'")
        }
        return now.addingTimeInterval(-TimeInterval(count) * unit)
    }
}
