// Safe to deploy: demo data only in development, plain HTTP only behind trusted proxies.
import Foundation
import SignetScript
import SignetTesting
import Synchronization
import Testing

/// A `signet serve` process, stopped by ``stop()``; its banner is what it printed.
final class ServeProcess {
    let process: ChildProcess
    let port: Int
    /// Where the process prints, read as it comes.
    private let outputFile: String

    init(data: String, extra: [String] = []) throws {
        port = try FreePort.find()
        outputFile = try TestFolder.make("serve-output", create: false).path
        process = try ChildProcess.start(
            SignetCommand.executable.path, ["serve", "--data-dir", data, "--port", String(port), "--password-hash-cost", "4"] + extra,
            output: .file(outputFile))
    }

    /// What the process printed so far.
    private var printed: String { FileManager.default.contents(atPath: outputFile).map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// Waits until discovery answers on 127.0.0.1 (the server may listen on every address) and
    /// the banner, written once the port is bound, has arrived: a request can be served a moment
    /// before the banner is written, and a server stopped in that moment would have printed nothing.
    func waitUntilReady() async throws -> Bool {
        for _ in 0..<150 {
            if let response = try? await ScriptedBrowser().get("http://127.0.0.1:\(port)/.well-known/openid-configuration"), response.status == 200,
                printed.contains("is listening on")
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
        defer { unlink(outputFile) }
        return printed
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
        // --sms-outbox: off loopback serve needs an SMS gateway or this (see smsGateway below).
        let server = try ServeProcess(
            data: data, extra: ["--host", "0.0.0.0", "--trusted-proxy", "127.0.0.1/32", "--issuer", "https://idp.example.test", "--sms-outbox"])
        #expect(try await server.waitUntilReady())
        let banner = server.stop()
        #expect(!banner.contains("Demo data"))
        #expect(banner.contains("127.0.0.1/32"))
        #expect(!FileManager.default.fileExists(atPath: data + "/demo.json"))
        #expect(try SignetCommand.run(["clients", "list", "--data-dir", data]).stdout.contains("No clients."))

        // On loopback too, when a TLS proxy in front is named (https issuer): production-shaped, so no demo data.
        let proxied = try ServeProcess(data: data, extra: ["--issuer", "https://idp.example.test", "--sms-outbox"])
        #expect(try await proxied.waitUntilReady())
        #expect(!proxied.stop().contains("Demo data"))
        #expect(!FileManager.default.fileExists(atPath: data + "/demo.json"))

        let forced = try ServeProcess(
            data: data,
            extra: ["--host", "0.0.0.0", "--trusted-proxy", "127.0.0.1", "--issuer", "https://idp.example.test", "--demo", "--sms-outbox"])
        #expect(try await forced.waitUntilReady())
        #expect(forced.stop().contains("Demo data"))
    }

    @Test(
        "off loopback (another address, an https issuer or a proxy), serve refuses to start without sms.webhookUrl unless sms.outbox says so, and then warns"
    )
    func smsGateway() async throws {
        let data = try SignetCommand.dataFolder()
        let offLoopback = ["--host", "0.0.0.0", "--port", "0", "--trusted-proxy", "10.0.0.0/8", "--issuer", "https://idp.example.test"]
        for arguments in [offLoopback, ["--port", "0", "--issuer", "https://idp.example.test"], ["--port", "0", "--trusted-proxy", "10.0.0.1"]] {
            let refused = try SignetCommand.run(["serve", "--data-dir", data] + arguments)
            #expect(refused.status != 0, "\(arguments)")
            #expect(
                refused.stderr.contains("sms.webhookUrl (default): is not set, and this server is not on loopback"), "\(arguments): \(refused.all)")
            #expect(refused.stderr.contains("--sms-webhook-url") && refused.stderr.contains("SIGNET_SMS_OUTBOX=true"), "\(refused.all)")
            #expect(!refused.stdout.contains("is listening"))
            // config check says the same.
            let checked = try SignetCommand.run(["config", "check", "--data-dir", data] + arguments)
            #expect(checked.status == 1)
            #expect(checked.stderr.contains("sms.webhookUrl (default): is not set"), "\(checked.all)")
        }
        #expect(!FileManager.default.fileExists(atPath: data + "/signet.sqlite"), "refused before the store was made")

        // Explicitly, by flag or variable: accepted (config check shows where it came from).
        let byFlag = try SignetCommand.run(["config", "check", "--data-dir", data, "--sms-outbox"] + offLoopback)
        #expect(byFlag.status == 0, "\(byFlag.all)")
        #expect(byFlag.stdout.contains("[flag --sms-outbox]"))
        let byVariable = try SignetCommand.run(["config", "check", "--data-dir", data] + offLoopback, environment: ["SIGNET_SMS_OUTBOX": "true"])
        #expect(byVariable.status == 0, "\(byVariable.all)")
        #expect(byVariable.stdout.contains("[environment SIGNET_SMS_OUTBOX]"))
        // With the gateway: accepted; the gateway and the outbox together, or no outbox and no gateway, are not.
        let gateway = ["SIGNET_SMS_WEBHOOK_URL": "https://sms.example.test/signet", "SIGNET_SMS_WEBHOOK_SECRET": "a-webhook-secret-of-32-characters"]
        #expect(try SignetCommand.run(["config", "check", "--data-dir", data] + offLoopback, environment: gateway).status == 0)
        let both = try SignetCommand.run(["config", "check", "--data-dir", data, "--sms-outbox"] + offLoopback, environment: gateway)
        #expect(both.status == 1)
        #expect(both.stderr.contains("sms.outbox (flag --sms-outbox): is true, but sms.webhookUrl is set too"), "\(both.all)")
        let neither = try SignetCommand.run(["config", "check", "--data-dir", data, "--no-sms-outbox", "--port", "0"])
        #expect(neither.status == 1, "false refuses the outbox on loopback too")
        #expect(neither.stderr.contains("sms.webhookUrl (default): is not set, and sms.outbox is false"), "\(neither.all)")
        let badValue = try SignetCommand.run(["config", "check", "--data-dir", data, "--port", "0"], environment: ["SIGNET_SMS_OUTBOX": "perhaps"])
        #expect(badValue.status != 0, "\(badValue.all)")
        // On loopback the outbox stays the default.
        #expect(try SignetCommand.run(["config", "check", "--data-dir", data, "--port", "0"]).status == 0)

        // Started with --sms-outbox off loopback, serve says where the codes go.
        let port = try FreePort.find()
        let logFile = URL(fileURLWithPath: data).appendingPathComponent("serve.log")
        let server = try ChildProcess.start(
            SignetCommand.executable.path,
            ["serve", "--data-dir", data, "--port", String(port), "--password-hash-cost", "4", "--log-format", "json", "--sms-outbox"]
                + offLoopback.dropFirst(4),
            errors: .file(logFile.path))
        defer { if server.isRunning { server.terminate() } }
        var ready = false
        for _ in 0..<150 where !ready {
            if let response = try? await ScriptedBrowser().get("http://127.0.0.1:\(port)/health/ready"), response.status == 200 {
                ready = true
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(ready)
        server.terminate()
        server.waitUntilExit()
        let log = String(decoding: try Data(contentsOf: logFile), as: UTF8.self)
        #expect(log.contains("sms.outbox_in_use"), "\(log.prefix(2000))")
    }

    @Test("plain HTTP off loopback needs trusted proxies and an https issuer; a bad proxy network is named")
    func plainHTTPRules() throws {
        let data = try SignetCommand.dataFolder()
        let bare = try SignetCommand.run(["serve", "--data-dir", data, "--host", "0.0.0.0", "--port", "0"])
        #expect(bare.status != 0)
        #expect(bare.all.contains("--trusted-proxy"))
        let httpIssuer = try SignetCommand.run([
            "serve", "--data-dir", data, "--host", "0.0.0.0", "--port", "0", "--trusted-proxy", "10.0.0.0/8", "--issuer", "http://idp.example.test",
        ])
        #expect(httpIssuer.status != 0)
        let badNetwork = try SignetCommand.run(["serve", "--data-dir", data, "--port", "0", "--trusted-proxy", "10.0.0.0/99"])
        #expect(badNetwork.status != 0)
        #expect(badNetwork.all.contains("10.0.0.0/99"))
    }
}
