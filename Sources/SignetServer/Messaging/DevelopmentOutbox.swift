// The development outbox: messages written to a file in the data folder instead of being sent.
import Foundation
import SignetCore

/// Appends each message as a JSON line to `outbox.jsonl` in the data folder, for `signet outbox`
/// to show; optionally tells a callback (which `signet serve` in demo mode uses to print it).
public actor DevelopmentOutbox: MessageSender {
    /// The file messages are appended to.
    public let file: URL
    private let onSend: @Sendable (OutgoingMessage) -> Void

    public init(dataDirectory: URL, onSend: @escaping @Sendable (OutgoingMessage) -> Void = { _ in }) {
        self.file = dataDirectory.appendingPathComponent("outbox.jsonl")
        self.onSend = onSend
    }

    public func send(_ message: OutgoingMessage) async throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var line = try encoder.encode(message)
        line.append(UInt8(ascii: "\n"))
        if !FileManager.default.fileExists(atPath: file.path) {
            // Codes are written to it: owner-only from the start. Another writer may create it first.
            do { try PrivateFile.createEmpty(at: file.path) } catch let error as PrivateFileError where error.exists {} catch {
                throw MessageDeliveryFailure("cannot create \(file.path): \(error)")
            }
        }
        do {
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: line)
        } catch {
            throw MessageDeliveryFailure("cannot write \(file.path)")
        }
        onSend(message)
    }

    /// The messages in an outbox file, oldest first.
    public static func read(dataDirectory: URL) throws -> [OutgoingMessage] {
        let file = dataDirectory.appendingPathComponent("outbox.jsonl")
        guard let data = FileManager.default.contents(atPath: file.path) else { return [] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try data.split(separator: UInt8(ascii: "\n")).map { try decoder.decode(OutgoingMessage.self, from: Data($0)) }
    }
}
