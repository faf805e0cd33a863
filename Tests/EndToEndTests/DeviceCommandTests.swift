// `signet serve --dev-tls`, `signet demo --device` and `signet device …` against a real server process.
import Foundation
import SignetScript
import SignetTesting
import Testing

@Suite("The device commands: serve --dev-tls, demo --device, device activate|status|reactivate|deactivate")
struct DeviceCommandTests {
    /// Starts `signet serve` with `extra` and waits until discovery answers over `scheme`.
    static func serve(data: String, port: Int, extra: [String] = [], scheme: String = "http") async throws -> ChildProcess {
        let server = try ChildProcess.start(
            SignetCommand.executable.path, ["serve", "--data-dir", data, "--port", String(port), "--password-hash-cost", "4"] + extra)
        let browser = scheme == "https" ? ScriptedBrowser(tls: try TestTLS.client()) : ScriptedBrowser()
        for _ in 0..<150 {
            if let response = try? await browser.get("\(scheme)://127.0.0.1:\(port)/.well-known/openid-configuration"), response.status == 200 {
                return server
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        server.terminate()
        throw TestFailure("signet serve \(extra.joined(separator: " ")) did not answer over \(scheme)")
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func stop(_ server: ChildProcess) {
        server.terminate()
        server.waitUntilExit()
    }

    @Test("demo --device plays activation, a bound call over mutual TLS, reactivation, a lock and the refusals; without TLS it says what to start")
    func demoDevice() async throws {
        let data = try SignetCommand.dataFolder()
        let port = try FreePort.find()
        // A first start over plain HTTP seeds the demo; demo --device then says it needs TLS.
        let plain = try await Self.serve(data: data, port: port)
        let refused = try SignetCommand.run(["demo", "--device", "--data-dir", data])
        Self.stop(plain)
        #expect(refused.status != 0)
        #expect(refused.stdout.contains("signet serve --dev-tls"), "\(refused.all)")

        let server = try await Self.serve(data: data, port: port, extra: ["--dev-tls"], scheme: "https")
        defer { Self.stop(server) }
        let seed = try String(contentsOfFile: data + "/demo.json", encoding: .utf8)
        #expect(seed.contains("https://127.0.0.1:\(port)"), "demo.json names the issuer served now")
        #expect(FileManager.default.fileExists(atPath: data + "/dev-tls/ca.pem"))
        let keyMode = try FileManager.default.attributesOfItem(atPath: data + "/dev-tls/ca.key")[.posixPermissions] as? Int
        #expect(keyMode == 0o600)

        let demo = try SignetCommand.run(["demo", "--device", "--data-dir", data])
        #expect(demo.status == 0, "\(demo.all)")
        for step in [
            "Activated: a P-256 key", "bound to the certificate (RFC 8705 cnf)",
            "/userinfo with the certificate: 200; the same token without it: 401",
            "Reactivated:", "locked from a login elsewhere", "Refused: status says revoked", "All steps passed.",
        ] {
            #expect(demo.stdout.contains(step), "missing: \(step)")
        }
        let events = try SignetCommand.run(["devices", "events", "demo", "--data-dir", data]).stdout
        for kind in ["device.activated", "device.reactivated", "device.replaced", "device.locked"] {
            #expect(events.contains(kind), "\(kind) in \(events)")
        }
    }

    @Test("device activate, status, reactivate and deactivate keep one installation in a folder, its key sealed; the helpdesk sees it")
    func deviceLifecycle() async throws {
        let data = try SignetCommand.dataFolder()
        let port = try FreePort.find()
        let server = try await Self.serve(data: data, port: port, extra: ["--dev-tls"], scheme: "https")
        defer { Self.stop(server) }
        let folder = data + "/phone"
        func device(_ arguments: [String]) throws -> SignetCommand.Output {
            try SignetCommand.run(["device"] + arguments + ["--data-dir", data, "--folder", folder])
        }

        let notYet = try device(["status"])
        #expect(notYet.status == 3)
        #expect(notYet.stdout.contains("Not activated."))

        let activated = try device(["activate", "--name", "Test phone"])
        #expect(activated.status == 0, "\(activated.all)")
        #expect(activated.stdout.contains("Activated "))
        let sealed = try Data(contentsOf: URL(fileURLWithPath: folder + "/device-credential.sealed"))
        #expect(!String(decoding: sealed, as: UTF8.self).contains("BEGIN"), "key and chain are sealed, not PEM")
        #expect(try FileManager.default.attributesOfItem(atPath: folder + "/sealing.key")[.posixPermissions] as? Int == 0o600)
        #expect(try device(["activate"]).status != 0, "a second activation into the same folder is refused")

        let status = try device(["status"])
        #expect(status.status == 0, "\(status.all)")
        #expect(status.stdout.contains("attestation none"))
        let listed = try SignetCommand.run(["devices", "list", "demo", "--data-dir", data]).stdout
        #expect(listed.contains("Test phone") && listed.contains("activated"))

        let reactivated = try device(["reactivate"])
        #expect(reactivated.status == 0, "\(reactivated.all)")
        #expect(reactivated.stdout.contains("Reactivated: "))
        #expect(try device(["status"]).status == 0, "the new certificate is activated")

        // A wrong sealing key opens nothing.
        let wrongKey = data + "/wrong.key"
        try (Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString() + "\n").write(
            toFile: wrongKey, atomically: true, encoding: .utf8)
        let wrong = try device(["status", "--sealing-key-file", wrongKey])
        #expect(wrong.status != 0)
        #expect(wrong.all.contains("device_key_unavailable") || wrong.all.contains("encryption key"), "\(wrong.all)")

        let deactivated = try device(["deactivate"])
        #expect(deactivated.stdout.contains("Deactivated"), "\(deactivated.all)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/device-credential.sealed"))
        #expect(try device(["status"]).stdout.contains("Not activated."))
        let after = try SignetCommand.run(["devices", "list", "demo", "--data-dir", data]).stdout
        #expect(after.contains("replaced") && after.contains("deactivated"))
    }

    @Test("serve --dev-tls is for loopback only and not beside --tls-certificate")
    func devTLSRefusals() throws {
        let data = try SignetCommand.dataFolder()
        let remote = try SignetCommand.run(["serve", "--data-dir", data, "--dev-tls", "--host", "0.0.0.0"])
        #expect(remote.status != 0)
        #expect(remote.all.contains("--dev-tls is for loopback only"))
        let both = try SignetCommand.run(["serve", "--data-dir", data, "--dev-tls", "--tls-certificate", "a.pem", "--tls-key", "a.key"])
        #expect(both.status != 0)
        #expect(both.all.contains("leave out --tls-certificate"))
    }
}
