// Safe to deploy: demo data only in development, plain HTTP only behind trusted proxies.
import Foundation
import SignetTesting
import Synchronization
import Testing

/// What a process printed so far, appended as it arrives.
final class PrintedOutput: Sendable {
    private let data = Mutex(Data())
    func append(_ chunk: Data) { data.withLock { $0.append(chunk) } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}

/// A `signet serve` process, stopped by ``stop()``; its banner is what it printed.
final class ServeProcess {
    let process = Process()
    let output = Pipe()
    let port: Int
    /// What the process printed so far, read as it comes.
    private let printed = PrintedOutput()

    init(data: String, extra: [String] = []) throws {
        port = try FreePort.find()
        process.executableURL = SignetCommand.executable
        process.arguments = ["serve", "--data-dir", data, "--port", String(port), "--password-hash-cost", "4"] + extra
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let printed = self.printed
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            printed.append(chunk)
        }
        try process.run()
    }

    /// Waits until discovery answers on 127.0.0.1 (the server may listen on every address) and
    /// the banner, written once the port is bound, has arrived: a request can be served a moment
    /// before the banner is written, and a server stopped in that moment would have printed nothing.
    func waitUntilReady() async throws -> Bool {
        for _ in 0..<150 {
            if let response = try? await TestBrowser().get("http://127.0.0.1:\(port)/.well-known/openid-configuration"), response.status == 200,
                printed.text.contains("is listening on")
            {
                return true
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Stops the server and returns everything it printed.
    func stop() -> String {
        process.terminate()
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        printed.append(rest)
        return printed.text
    }
}

@Suite("Deployment: demo data and proxies")
struct DeploymentTests {
    @Test("the demo password is printed on the first start only; later starts point to demo.json")
    func passwordOnce() async throws {
        let data = try SignetCommand.dataFolder()
        let first = try ServeProcess(data: data)
        #expect(try await first.waitUntilReady())
        let firstBanner = first.stop()
        let seed = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: data + "/demo.json"))) as? [String: Any]
        let password = try #require(seed?["password"] as? String)
        #expect(firstBanner.contains(password))
        let second = try ServeProcess(data: data)
        #expect(try await second.waitUntilReady())
        let secondBanner = second.stop()
        #expect(secondBanner.contains("Demo data"))
        #expect(!secondBanner.contains(password))
        #expect(secondBanner.contains("demo.json"))
    }

    @Test("off loopback, or behind a proxy with an https issuer, no demo data is seeded; --demo forces it")
    func noDemoOffLoopback() async throws {
        let data = try SignetCommand.dataFolder()
        let server = try ServeProcess(data: data, extra: ["--host", "0.0.0.0", "--trusted-proxy", "127.0.0.1/32", "--issuer", "https://idp.example.test"])
        #expect(try await server.waitUntilReady())
        let banner = server.stop()
        #expect(!banner.contains("Demo data"))
        #expect(banner.contains("127.0.0.1/32"))
        #expect(!FileManager.default.fileExists(atPath: data + "/demo.json"))
        #expect(try SignetCommand.run(["clients", "list", "--data-dir", data]).stdout.contains("No clients."))

        // On loopback too, when a TLS proxy in front is named (https issuer): production-shaped, so no demo data.
        let proxied = try ServeProcess(data: data, extra: ["--issuer", "https://idp.example.test"])
        #expect(try await proxied.waitUntilReady())
        #expect(!proxied.stop().contains("Demo data"))
        #expect(!FileManager.default.fileExists(atPath: data + "/demo.json"))

        let forced = try ServeProcess(data: data, extra: ["--host", "0.0.0.0", "--trusted-proxy", "127.0.0.1", "--issuer", "https://idp.example.test", "--demo"])
        #expect(try await forced.waitUntilReady())
        #expect(forced.stop().contains("Demo data"))
    }

    @Test("plain HTTP off loopback needs trusted proxies and an https issuer; a bad proxy network is named")
    func plainHTTPRules() throws {
        let data = try SignetCommand.dataFolder()
        let bare = try SignetCommand.run(["serve", "--data-dir", data, "--host", "0.0.0.0", "--port", "0"])
        #expect(bare.status != 0)
        #expect(bare.all.contains("--trusted-proxy"))
        let httpIssuer = try SignetCommand.run(["serve", "--data-dir", data, "--host", "0.0.0.0", "--port", "0", "--trusted-proxy", "10.0.0.0/8", "--issuer", "http://idp.example.test"])
        #expect(httpIssuer.status != 0)
        let badNetwork = try SignetCommand.run(["serve", "--data-dir", data, "--port", "0", "--trusted-proxy", "10.0.0.0/99"])
        #expect(badNetwork.status != 0)
        #expect(badNetwork.all.contains("10.0.0.0/99"))
    }
}
