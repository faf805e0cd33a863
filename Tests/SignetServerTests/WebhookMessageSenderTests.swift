import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import SignetScript
import SignetServer
import SignetTesting
import Testing

/// A fake SMS gateway on a loopback port that answers with scripted statuses and records requests.
actor FakeGateway {
    struct Received: Sendable {
        let headers: [String: String]
        let body: Data
    }
    private(set) var received: [Received] = []
    private var statuses: [Int]

    init(statuses: [Int]) { self.statuses = statuses }

    func record(_ request: Received) -> Int {
        received.append(request)
        return statuses.isEmpty ? 200 : statuses.removeFirst()
    }

    /// Runs the gateway for the duration of `body`, passing its URL.
    static func run<T: Sendable>(statuses: [Int], _ body: (FakeGateway, String) async throws -> T) async throws -> T {
        let gateway = FakeGateway(statuses: statuses)
        let router = Router()
        router.post("/sms") { request, _ -> Response in
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let body = try await request.body.collect(upTo: 1 << 16)
            let status = await gateway.record(.init(headers: headers, body: Data(buffer: body)))
            return Response(status: .init(code: status))
        }
        var logger = Logger(label: "gateway")
        logger.logLevel = .critical
        return try await withRunningService("the fake gateway", logger: logger) { [logger] listening in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in await listening(channel.localAddress?.port ?? 0) }, logger: logger)
        } _: { port in
            try await body(gateway, "http://127.0.0.1:\(port)/sms")
        }
    }
}

@Suite("SMS delivery through a gateway webhook")
struct WebhookMessageSenderTests {
    let message = OutgoingMessage(
        id: "m-1", to: "+4511111111", body: "123456 is your code\n\n@id.example.com #123456", purpose: "login_otp",
        createdAt: Date(timeIntervalSince1970: 1_800_000_000))

    /// A client that keeps no idle connections, so the fake gateway can shut down at once.
    static func shortLivedClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .milliseconds(50), concurrentHTTP1ConnectionsPerHostSoftLimit: 1)
        configuration.maximumUsesPerConnection = 1
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    @Test("server errors are retried with backoff until the gateway accepts; each try is signed")
    func retriesThenSucceeds() async throws {
        try await FakeGateway.run(statuses: [500, 503, 200]) { gateway, url in
            let waits = WaitLog()
            let client = Self.shortLivedClient()
            let sender = WebhookMessageSender(
                url: url, secret: "a-shared-secret-of-some-length", httpClient: client, maxAttempts: 3, backoff: .milliseconds(5),
                sleep: { await waits.add($0) })
            try await sender.send(message)
            try await client.shutdown()
            let received = await gateway.received
            #expect(received.count == 3)
            #expect(await waits.durations == [.milliseconds(5), .milliseconds(10)])
            let last = try #require(received.last)
            #expect(last.headers["idempotency-key"] == "m-1")
            let signature = try #require(last.headers["signet-signature"])
            let timestamp = try #require(signature.split(separator: ",").first?.dropFirst(2)).description
            #expect(
                signature == WebhookMessageSender.signature(body: last.body, timestamp: Int(timestamp)!, secret: "a-shared-secret-of-some-length"))
            let json = try JSONSerialization.jsonObject(with: last.body) as? [String: Any]
            #expect(json?["to"] as? String == "+4511111111")
            #expect(json?["purpose"] as? String == "login_otp")
        }
    }

    @Test("a client error is not retried and fails clearly")
    func clientErrorFails() async throws {
        try await FakeGateway.run(statuses: [400]) { gateway, url in
            let client = Self.shortLivedClient()
            let sender = WebhookMessageSender(
                url: url, secret: "a-shared-secret-of-some-length", httpClient: client, maxAttempts: 3, backoff: .milliseconds(1), sleep: { _ in })
            await #expect(throws: MessageDeliveryFailure("gateway answered 400")) { try await sender.send(message) }
            try await client.shutdown()
            #expect(await gateway.received.count == 1)
        }
    }

    @Test("an unreachable gateway fails after every try")
    func unreachable() async throws {
        let port = try FreePort.find()
        let attempts = WaitLog()
        let sender = WebhookMessageSender(
            url: "http://127.0.0.1:\(port)/sms", secret: "secret-secret-secret", timeout: .milliseconds(300), maxAttempts: 2,
            backoff: .milliseconds(1), sleep: { await attempts.add($0) })
        await #expect(throws: MessageDeliveryFailure.self) { try await sender.send(message) }
        #expect(await attempts.durations.count == 1)
    }

    @Test("the development outbox appends messages that signet outbox can read back")
    func developmentOutbox() async throws {
        let folder = try TestFolder.make("outbox")
        defer { try? FileManager.default.removeItem(at: folder) }
        let outbox = DevelopmentOutbox(dataDirectory: folder)
        try await outbox.send(message)
        try await outbox.send(message)
        let read = try DevelopmentOutbox.read(dataDirectory: folder)
        #expect(read.count == 2)
        #expect(read.first == message)
    }
}

actor WaitLog {
    private(set) var durations: [Duration] = []
    func add(_ duration: Duration) { durations.append(duration) }
}
