// `signet-bench --callgrind N`: the instructions one token request (or, with `--only flow`, one
// full login flow) costs the server, counted by valgrind's callgrind — a figure that does not move
// with machine noise.
import ArgumentParser
import Foundation
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer
import SignetStorage

extension Bench {
    /// What `--callgrind` counts: token requests, or with `--only flow` full login flows.
    enum CallgrindSubject {
        case tokenRequest, loginFlow

        init(rows: [BenchRow]) throws {
            switch Set(rows) {
            case [.flow]: self = .loginFlow
            case [.code], Set(BenchRow.allCases): self = .tokenRequest
            default: throw ValidationError("--callgrind counts token requests (--only code, the default) or full login flows (--only flow)")
            }
        }

        var fileSuffix: String { self == .tokenRequest ? "token" : "flow" }
    }

    /// Runs `signet serve` under callgrind with instrumentation off, warms it up, counts `requests`
    /// token requests (authorization code + PKCE + private_key_jwt, one at a time) or, with
    /// `--only flow`, full login flows (authorize, login page, password, code exchange), and
    /// prints the instructions per request or flow. The profile is left in `callgrind.out.token`
    /// (or `callgrind.out.flow`) for `callgrind_annotate`.
    func callgrindRequests(_ requests: Int) async throws {
        let subject = try CallgrindSubject(rows: only)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-callgrind-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let user = BenchUser(username: "bench-0", password: SecureRandom().token(byteCount: 12))
        let location = database ?? folder.appendingPathComponent("signet.sqlite").path
        let seedStore = try await SQLStore.open(location)
        try await SignetAdmin(store: seedStore, passwordHashCost: 4).addUser(username: user.username, password: user.password)
        try await seedStore.close()
        let output = FileManager.default.currentDirectoryPath + "/callgrind.out.\(subject.fileSuffix)"
        let port = try FreePort.find()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/valgrind")
        let workaround = try ValgrindWorkaround.prepare(in: folder, signet: try signetExecutable())
        var environment = ["LD_PRELOAD": workaround.preload]
        // The URL may hold a password: through the environment, never a flag (`ps` shows flags).
        if let database { environment["SIGNET_DATABASE"] = database }
        server.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let arguments = [
            "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=\(output)", workaround.executable,
            "serve", "--data-dir", folder.path, "--port", String(port), "--password-hash-cost", "4", "--log-level", "error",
        ]
        server.arguments = arguments
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { if server.isRunning { server.terminate() } }
        let issuer = "http://127.0.0.1:\(port)"
        for _ in 0..<600 {
            if let response = try? await ScriptedBrowser().get(issuer + "/.well-known/openid-configuration"), response.status == 200 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let seed = try DemoSeed.load(dataDirectory: folder)
        let backend = try await Bench.demoBackend(seed: seed, issuer: issuer)
        let warmUp = 30
        let one: () async throws -> Void
        switch subject {
        case .tokenRequest:
            let queue = try await PreparedCodes.make(
                location: location, clientID: seed.backendClientID, redirectURI: seed.backendRedirectURIs[0], users: [user],
                perWorker: warmUp + requests)[0]
            one = { _ = try await backend.exchangeCode(queue.next()!, pending: queue.pending) }
        case .loginFlow:
            let flow = FlowRunner(seed: seed, backend: backend)
            one = { _ = try await flow.fullFlow(as: user) }
        }
        for _ in 0..<warmUp { try await one() }
        try Self.callgrindControl(["-i", "on", String(server.processIdentifier)])
        for _ in 0..<requests { try await one() }
        try Self.callgrindControl(["-i", "off", String(server.processIdentifier)])
        server.terminate()
        server.waitUntilExit()
        let profile = try String(contentsOfFile: output, encoding: .utf8)
        // The file opens with a `summary:` line callgrind leaves at 0 when instrumentation starts off;
        // the count is on the `totals:` line at its end.
        guard let line = profile.split(separator: "\n").last(where: { $0.hasPrefix("totals:") }),
            let total = Double(line.split(separator: " ").last ?? "")
        else { throw ValidationError("no totals in \(output)") }
        let store = database == nil ? "SQLite" : "PostgreSQL"
        switch subject {
        case .tokenRequest:
            print("callgrind: \(requests) token requests (authorization code + PKCE, private_key_jwt, ES256 ID token), \(store)")
            print(String(format: "instructions per token request: %.0f (%.2f million)", total / Double(requests), total / Double(requests) / 1e6))
        case .loginFlow:
            print("callgrind: \(requests) full login flows (authorize, login page, password with bcrypt cost 4, code exchange), \(store)")
            print(String(format: "instructions per full login flow: %.0f (%.2f million)", total / Double(requests), total / Double(requests) / 1e6))
        }
        print("profile: \(output) (callgrind_annotate \(output) | head -60)")
    }

    private static func callgrindControl(_ arguments: [String]) throws {
        let control = Process()
        control.executableURL = URL(fileURLWithPath: "/usr/bin/callgrind_control")
        control.arguments = arguments
        control.standardOutput = FileHandle.nullDevice
        try control.run()
        control.waitUntilExit()
        guard control.terminationStatus == 0 else { throw ValidationError("callgrind_control \(arguments.joined(separator: " ")) failed") }
    }
}
