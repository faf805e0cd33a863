// Delivery of text messages (SMS one-time codes) behind a small protocol.
import Foundation

/// A text message to deliver.
public struct OutgoingMessage: Sendable, Codable, Equatable {
    /// A unique id, for idempotency at the gateway.
    public var id: String
    /// The recipient's phone number (E.164).
    public var to: String
    /// The text. Contains a one-time code: never log it.
    public var body: String
    /// Why it is sent, e.g. `login_otp`.
    public var purpose: String
    public var createdAt: Date

    public init(id: String, to: String, body: String, purpose: String, createdAt: Date) {
        self.id = id
        self.to = to
        self.body = body
        self.purpose = purpose
        self.createdAt = createdAt
    }
}

/// Why a message could not be delivered.
public struct MessageDeliveryFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// A short reason without the message's content.
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "message delivery failed: \(reason)" }
}

/// Sends text messages. Implementations: ``DevelopmentOutbox``, ``WebhookMessageSender``, ``MemoryOutbox``.
public protocol MessageSender: Sendable {
    /// Delivers the message or throws ``MessageDeliveryFailure``.
    func send(_ message: OutgoingMessage) async throws
}

/// Keeps messages in memory: for tests, with scripted failures.
public actor MemoryOutbox: MessageSender {
    public private(set) var messages: [OutgoingMessage] = []
    private var failuresLeft = 0
    private var onSend: (@Sendable (OutgoingMessage) -> Void)?

    public init() {}

    /// Makes the next `count` sends fail.
    public func failNext(_ count: Int) { failuresLeft = count }

    /// Calls `hook` with each message as it is sent (for tests of what holds at that moment).
    public func whenSending(_ hook: @escaping @Sendable (OutgoingMessage) -> Void) { onSend = hook }

    public func send(_ message: OutgoingMessage) async throws {
        onSend?(message)
        if failuresLeft > 0 {
            failuresLeft -= 1
            throw MessageDeliveryFailure("scripted failure")
        }
        messages.append(message)
    }

    /// The last message sent to `phoneNumber`.
    public func last(to phoneNumber: String) -> OutgoingMessage? { messages.last { $0.to == phoneNumber } }
}
