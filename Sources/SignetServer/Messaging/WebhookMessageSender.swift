// Delivery through an SMS gateway's webhook: signed JSON POSTs with retries.
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import SignetCore

/// POSTs each message as JSON to a gateway URL, signed with HMAC-SHA256.
///
/// The signature header is `Signet-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
/// so the gateway can check origin and freshness. 2xx is success; 5xx, 429 and network errors are
/// retried with exponential backoff; other 4xx fail at once.
public struct WebhookMessageSender: MessageSender {
    public let url: String
    private let secret: SymmetricKey
    private let httpClient: HTTPClient
    private let timeout: Duration
    private let maxAttempts: Int
    private let backoff: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - url: the gateway endpoint (https, or http on loopback for development).
    ///   - secret: the shared signing secret.
    ///   - maxAttempts: tries in all (default 3).
    ///   - backoff: the first wait between tries, doubled each time (default 200 ms).
    public init(
        url: String, secret: String, httpClient: HTTPClient = .shared, timeout: Duration = .seconds(5), maxAttempts: Int = 3,
        backoff: Duration = .milliseconds(200), sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.url = url
        self.secret = SymmetricKey(data: Data(secret.utf8))
        self.httpClient = httpClient
        self.timeout = timeout
        self.maxAttempts = max(1, maxAttempts)
        self.backoff = backoff
        self.sleep = sleep
        self.now = now
    }

    /// The signature header value for `body` at `timestamp`, as a gateway recomputes it.
    public static func signature(body: Data, timestamp: Int, secret: String) -> String {
        signature(body: body, timestamp: timestamp, key: SymmetricKey(data: Data(secret.utf8)))
    }

    static func signature(body: Data, timestamp: Int, key: SymmetricKey) -> String {
        var signed = Data("\(timestamp).".utf8)
        signed.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: key)
        return "t=\(timestamp),v1=" + Data(mac).hexEncodedString()
    }

    public func send(_ message: OutgoingMessage) async throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = try encoder.encode(message)
        var wait = backoff
        var lastReason = "not attempted"
        for attempt in 1...maxAttempts {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "Signet-Signature", value: Self.signature(body: body, timestamp: Int(now().timeIntervalSince1970), key: secret))
            request.headers.add(name: "Idempotency-Key", value: message.id)
            request.body = .bytes(ByteBuffer(bytes: body))
            do {
                let response = try await httpClient.execute(request, timeout: .init(timeout))
                _ = try? await response.body.collect(upTo: 64 * 1024)
                let status = Int(response.status.code)
                if (200..<300).contains(status) { return }
                lastReason = "gateway answered \(status)"
                if status != 429, (400..<500).contains(status) { break }
            } catch {
                lastReason = "gateway unreachable (\(String(describing: type(of: error))))"
            }
            if attempt < maxAttempts {
                try await sleep(wait)
                wait = wait * 2
            }
        }
        throw MessageDeliveryFailure(lastReason)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
