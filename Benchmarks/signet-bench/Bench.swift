// `signet-bench`: measure the hot paths against a real `signet serve` process on loopback.
import ArgumentParser
import Crypto
import Foundation
import NIOSSL
import SignetClient
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer
import SignetStorage
import Synchronization

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signet-bench",
        abstract: "Benchmark full login flows and the token endpoint against a fresh `signet serve` process on loopback.",
        discussion: """
            Starts `signet serve` (the `signet` executable beside this one, or --signet) as a child process with a throwaway data folder (SQLite, or --database), then for each
            concurrency level runs, for --seconds each: full flows (authorize → login → token with private_key_jwt →
            ID-token validation), native logins through SignetClient (start → scenario → password → code exchange)
            and token-endpoint requests (a code exchange through the relying-party kit, the same requests built
            beforehand and sent as bytes so the load costs almost nothing, and the refresh_token grant with
            private_key_jwt); then, against the same data served with
            --dev-tls, device activations, device requests over mutual TLS and certificate-bound refreshes. Prints
            requests per second, p50/p99 latency, the server process's CPU time per request (user + system, from
            /proc), errors, the server's peak resident memory and its resident memory after each HTTP row (to
            watch it under sustained load, run one row many times: `--concurrency 4 4 4 4`). With --isolate the
            server runs on CPUs of its own and the load on the others, as when its clients are on other machines.
            Not a test: the figures depend on the machine.
            """)

    @Option(help: "The `signet` executable to measure (default: the one beside this command, as `swift build` leaves them).")
    var signet: String?
    @Option(help: "bcrypt cost the server uses for the benchmark user's password.") var passwordHashCost = 12
    @Option(help: "Seconds per measurement.") var seconds = 5.0
    @Option(parsing: .upToNextOption, help: "Concurrency levels.") var concurrency: [Int] = [1, 8, 32]
    @Option(help: "A postgres:// URL to benchmark PostgreSQL instead of SQLite: an empty database, which the run seeds and leaves filled.")
    var database: String?
    @Flag(
        inversion: .prefixedNo,
        help: "Also measure devices over mutual TLS (a second server with --dev-tls): activation, a device request, a bound refresh, device login.")
    var devices = true
    @Flag(
        name: .customLong("device"),
        help: "Measure only the device rows (activation, mutual TLS request, bound refresh, device login with a PIN authenticator).")
    var deviceOnly = false

    @Option(parsing: .upToNextOption, help: "Only these rows: flow, native, code, prepared, refresh, dpop (default: all).")
    var only: [BenchRow] = BenchRow.allCases

    @Flag(
        help:
            "Run the server on CPUs of its own (whole cores, at least half of the online CPUs this command may use) and the load on the others, as when its clients are on other machines (Linux, with util-linux's taskset; a PostgreSQL server is not placed)."
    )
    var isolate = false

    @Option(
        help:
            "Instead of the table: count the server's instructions for N token requests (or, with --only flow, N full login flows) under valgrind's callgrind."
    )
    var callgrind: Int?

    func validate() throws {
        guard !concurrency.isEmpty, concurrency.allSatisfy({ $0 >= 1 }) else { throw ValidationError("--concurrency takes levels of 1 or more") }
        guard seconds > 0, seconds.isFinite else { throw ValidationError("--seconds must be more than 0") }
        if isolate, callgrind != nil {
            throw ValidationError("--isolate and --callgrind do not go together: an instruction count does not depend on the CPUs")
        }
    }

    func run() async throws {
        if let callgrind { return try await callgrindRequests(callgrind) }
        let isolation = try isolate ? CPUIsolation.forThisMachine() : nil
        if let isolation {
            try CPUIsolation.checkTaskset()
            try isolation.pinThisProcess()
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // One user per worker, as real traffic has: a single account's concurrent attempts are throttled.
        let users = (0..<(concurrency.max() ?? 1)).map { BenchUser(username: "bench-\($0)", password: SecureRandom().token(byteCount: 12)) }
        let seedStore = try await SQLStore.open(database ?? folder.appendingPathComponent("signet.sqlite").path)
        let admin = SignetAdmin(store: seedStore, passwordHashCost: passwordHashCost)
        for user in users { try await admin.addUser(username: user.username, password: user.password) }
        try await seedStore.close()
        let port = try FreePort.find()
        let arguments = [
            "serve", "--data-dir", folder.path, "--port", String(port), "--password-hash-cost", String(passwordHashCost), "--log-level", "error",
        ]
        let server = try startServer(arguments, on: isolation)
        defer { server.terminate() }

        let issuer = "http://127.0.0.1:\(port)"
        try await waitUntilReady(issuer, browser: ScriptedBrowser(), server: server)
        let seed = try DemoSeed.load(dataDirectory: folder)
        let backend = try await Bench.demoBackend(seed: seed, issuer: issuer)
        let flow = FlowRunner(seed: seed, backend: backend)

        let placement = try isolation.map { ", " + (try $0.confirmed(serverPID: server.processIdentifier)) } ?? ", server and load sharing them"
        print(
            "Signet benchmark: loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores\(placement), bcrypt cost \(passwordHashCost), \(database == nil ? "SQLite" : "PostgreSQL"), \(seconds) s per row"
        )
        print("| path | concurrency | requests/s | p50 ms | p99 ms | server CPU ms/request | errors |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        var totalErrors = 0
        var resident: [Int] = []
        /// Prints the row, counts its errors (a row that answered no request is one) and notes
        /// the server's memory after it.
        func record(_ result: Measurement, _ name: String, _ level: Int) {
            totalErrors += result.report(name, level)
            if let kib = result.serverResidentKiB { resident.append(kib) }
        }
        /// One worker's codes for each of `level` workers, written into the store before a row.
        func prepareCodes(perWorker: Int, level: Int) async throws -> [PreparedCodes.Queue] {
            try await PreparedCodes.make(
                location: database ?? folder.appendingPathComponent("signet.sqlite").path, clientID: seed.backendClientID,
                redirectURI: seed.backendRedirectURIs[0], users: Array(users.prefix(level)), perWorker: perWorker)
        }
        if deviceOnly {
            server.terminate()
            server.waitUntilExit()
            totalErrors += try await deviceRows(folder: folder, seed: seed, users: users, isolation: isolation)
            print("errors: \(totalErrors)")
            if totalErrors > 0 { throw ExitCode.failure }
            return
        }
        for level in concurrency where only.contains(.flow) {
            let result = try await measure(concurrency: level, server: server.processIdentifier) { worker in
                try await flow.fullFlow(as: users[worker])
            }
            record(result, "full login flow", level)
        }
        let app = SignetClient(configuration: .init(issuer: issuer, clientID: seed.nativeClientID, redirectURI: seed.nativeRedirectURI))
        _ = try await app.discover()
        for level in concurrency where only.contains(.native) {
            let result = try await measure(concurrency: level, server: server.processIdentifier) { worker in
                try await NativeFlowRunner(seed: seed, client: app).passwordLogin(as: users[worker])
            }
            record(result, "native login (API, password) + token", level)
        }
        for level in concurrency where only.contains(.code) {
            // Enough codes for the row at 3 000 requests/s; a worker that runs out stops early.
            let queues = try await prepareCodes(perWorker: Int(seconds * 3_000) / level + 1, level: level)
            let result = try await measure(concurrency: level, server: server.processIdentifier) { worker in
                guard let code = queues[worker].next() else { throw OutOfInput() }
                return try await backend.exchangeCode(code, pending: queues[worker].pending).accessToken
            }
            record(result, "token endpoint (authorization code + PKCE, private_key_jwt, ES256 ID token)", level)
        }
        for level in concurrency where only.contains(.prepared) {
            // Enough for 15 s at 4 000 requests/s (each assertion lives 60 s); a longer row ends when they are used up.
            let codes = try await prepareCodes(perWorker: Int(min(seconds, 15) * 4_000) / level + 1, level: level)
            let queues = try await PreparedTokenRequests.make(codes: codes, backend: backend, hostAndPort: "127.0.0.1:\(port)")
            let result = try await measureWorkers(concurrency: level, server: server.processIdentifier) { worker, deadline, firstError in
                await PreparedTokenRequests.send(queues[worker], port: port, until: deadline, firstError: firstError)
            }
            record(result, "token endpoint, requests made beforehand (authorization code + PKCE, private_key_jwt, ES256 ID token)", level)
        }
        for level in concurrency where only.contains(.refresh) {
            var chains: [String] = []
            for worker in 0..<level { chains.append(try await flow.fullFlow(as: users[worker]).tokens.refreshToken ?? "") }
            let holders = chains.map(RefreshChain.init)
            let result = try await measure(concurrency: level, server: server.processIdentifier) { worker in
                try await holders[worker].refresh(with: backend)
            }
            record(result, "token endpoint (refresh, private_key_jwt)", level)
        }
        // The same with a DPoP proof on every request (RFC 9449): the cost of sender-constrained tokens.
        let dpopBackend = try await Self.demoBackend(seed: seed, issuer: issuer, dpopKey: P256.Signing.PrivateKey())
        let dpopFlow = FlowRunner(seed: seed, backend: dpopBackend)
        for level in concurrency where only.contains(.dpop) {
            var chains: [String] = []
            for worker in 0..<level { chains.append(try await dpopFlow.fullFlow(as: users[worker]).tokens.refreshToken ?? "") }
            let holders = chains.map(RefreshChain.init)
            let result = try await measure(concurrency: level, server: server.processIdentifier) { worker in
                try await holders[worker].refresh(with: dpopBackend)
            }
            record(result, "token endpoint (refresh, private_key_jwt + DPoP)", level)
        }
        let httpPeak = ProcessMemory.peak(pid: server.processIdentifier)
        server.terminate()
        server.waitUntilExit()
        if devices { totalErrors += try await deviceRows(folder: folder, seed: seed, users: users, isolation: isolation) }
        print("server peak memory: \(httpPeak.map { "\($0 / 1024) MiB" } ?? "unknown")")
        if !resident.isEmpty {
            print("server resident memory after each row: \(resident.map { String(format: "%.1f", Double($0) / 1024) }.joined(separator: ", ")) MiB")
        }
        print("errors: \(totalErrors)")
        if totalErrors > 0 { throw ExitCode.failure }
    }

    /// Starts `signet serve` (this executable) with `arguments`, on the server's CPUs if isolated.
    func startServer(_ arguments: [String], on isolation: CPUIsolation?) throws -> Process {
        let server = Process()
        let executable = try signetExecutable()
        let command = isolation.map { $0.serverCommand(executable, arguments) } ?? (executable: executable, arguments: arguments)
        server.executableURL = command.executable
        server.arguments = command.arguments
        // The URL may hold a password: through the environment, never a flag (`ps` shows flags).
        if let database { server.environment = ProcessInfo.processInfo.environment.merging(["SIGNET_DATABASE": database]) { _, given in given } }
        server.standardOutput = FileHandle.nullDevice
        try server.run()
        return server
    }

    /// The demo backend (private_key_jwt with the seed's key) against `issuer`, discovered.
    static func demoBackend(seed: DemoSeed, issuer: String, dpopKey: P256.Signing.PrivateKey? = nil) async throws -> RelyingParty {
        let key = try seed.backendKey()
        let backend = RelyingParty(
            configuration: RelyingPartyConfiguration(
                issuer: issuer, clientID: seed.backendClientID, clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID),
                dpopKey: dpopKey))
        _ = try await backend.discover()
        return backend
    }

    /// The `signet` executable: --signet, or `signet` in this command's own folder.
    func signetExecutable() throws -> URL {
        let path = signet ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("signet").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ValidationError("no signet executable at \(path): build it (`swift build -c release --product signet`) or name it with --signet")
        }
        return URL(fileURLWithPath: path).standardizedFileURL
    }

    /// The device rows, against a second server on the same data with `--dev-tls`; returns the errors.
    func deviceRows(folder: URL, seed: DemoSeed, users: [BenchUser], isolation: CPUIsolation?) async throws -> Int {
        let port = try FreePort.find()
        let arguments = [
            "serve", "--data-dir", folder.path, "--port", String(port), "--password-hash-cost", String(passwordHashCost), "--log-level", "error",
            "--dev-tls",
        ]
        let server = try startServer(arguments, on: isolation)
        defer { server.terminate() }
        let issuer = "https://127.0.0.1:\(port)"
        try await waitUntilReady(issuer, browser: ScriptedBrowser(tls: Self.trustingAnyServer), server: server)
        guard let caFile = DevelopmentTLS.caFile(dataDirectory: folder) else { throw ValidationError("--dev-tls made no CA") }
        let bench = DeviceBench(
            client: .init(issuer: issuer, clientID: seed.nativeClientID, redirectURI: seed.nativeRedirectURI),
            trustRoots: [try String(contentsOfFile: caFile, encoding: .utf8)], facetID: seed.facetID ?? DemoSeed.demoFacetID)
        var errors = 0
        for level in concurrency {
            let result = try await measure(concurrency: level, server: server.processIdentifier) { worker in
                try await bench.activate(as: users[worker])
            }
            errors += result.report("device activation (instance id, native login, CSR → certificate; new TLS connections)", level)
        }
        for level in concurrency {
            var installed: [BenchDevice] = []
            for worker in 0..<level { installed.append(try await bench.device(for: users[worker])) }
            let workers = installed
            let status = try await measure(concurrency: level, server: server.processIdentifier) { worker in try await workers[worker].status() }
            errors += status.report("mutual TLS device request (GET /devices/status)", level)
            let refresh = try await measure(concurrency: level, server: server.processIdentifier) { worker in try await workers[worker].refresh() }
            errors += refresh.report("token endpoint (refresh, certificate-bound, mutual TLS)", level)
            let login = try await measure(concurrency: level, server: server.processIdentifier) { worker in try await workers[worker].deviceLogin() }
            errors += login.report("device login (start, UAF assertion with PIN proof, finish → code)", level)
            let full = try await measure(concurrency: level, server: server.processIdentifier) { worker in
                try await workers[worker].deviceLoginToTokens()
            }
            errors += full.report("device login to tokens (the above and /token with PKCE over mutual TLS)", level)
            for device in workers { await device.shutdown() }
        }
        print("device server peak memory: \(ProcessMemory.peak(pid: server.processIdentifier).map { "\($0 / 1024) MiB" } ?? "unknown")")
        return errors
    }

    /// TLS that accepts the development server's certificate, for the readiness check only (the
    /// device rows then trust its CA file).
    static var trustingAnyServer: TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        return tls
    }

    func waitUntilReady(_ issuer: String, browser: ScriptedBrowser, server: Process) async throws {
        for _ in 0..<200 {
            // A server that refused to start (a bad setting) is reported at once, not waited for.
            guard server.isRunning else { throw ValidationError("the server exited with status \(server.terminationStatus) before it was ready") }
            if let response = try? await browser.get(issuer + "/.well-known/openid-configuration"), response.status == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the server did not start")
    }

    /// Runs `work` on `concurrency` workers for `seconds`, timing each call and the server's CPU time.
    func measure(concurrency: Int, server serverPID: Int32, _ work: @escaping @Sendable (Int) async throws -> some Sendable) async throws
        -> Measurement
    {
        try await measureWorkers(concurrency: concurrency, server: serverPID) { worker, deadline, firstError in
            var timing = WorkerTiming(reportingFirstErrorTo: firstError)
            // At least one call, however late the worker starts; then until the deadline or
            // 100 000 calls, whichever comes first. A worker whose `work` runs out of input
            // (throws `OutOfInput`) stops there: that is no error.
            repeat {
                let begin = ContinuousClock.now
                do {
                    _ = try await work(worker)
                    timing.succeeded(since: begin)
                } catch is OutOfInput {
                    break
                } catch {
                    timing.failed(error)
                }
            } while timing.goesOn(until: deadline)
            return timing
        }
    }

    /// Runs `runWorker` for each of `concurrency` workers, given the row's deadline and where to
    /// report the row's first error, and measures the server's CPU time over them all.
    func measureWorkers(
        concurrency: Int, server serverPID: Int32,
        _ runWorker: @escaping @Sendable (Int, ContinuousClock.Instant, FirstErrorReport) async -> WorkerTiming
    ) async throws -> Measurement {
        let cpuBefore = ProcessCPU.seconds(pid: serverPID)
        let deadline = ContinuousClock.now + .seconds(seconds)
        let start = ContinuousClock.now
        let firstError = FirstErrorReport()
        let timings = await withTaskGroup(of: WorkerTiming.self) { group in
            for worker in 0..<concurrency { group.addTask { await runWorker(worker, deadline, firstError) } }
            return await group.reduce(into: [WorkerTiming]()) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - start
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpuAfter = ProcessCPU.seconds(pid: serverPID)
        let cpu = cpuBefore.flatMap { before in cpuAfter.map { $0 - before } }
        return Measurement(
            latencies: timings.flatMap(\.latencies).sorted(), errors: timings.map(\.errors).reduce(0, +), seconds: wall, serverCPUSeconds: cpu,
            serverResidentKiB: ProcessMemory.resident(pid: serverPID))
    }
}

/// Prints the first error of a row, whichever worker meets it, so a failing row says why.
final class FirstErrorReport: Sendable {
    private let printed = Atomic<Bool>(false)

    func offer(_ error: any Error) {
        guard !printed.exchange(true, ordering: .relaxed) else { return }
        FileHandle.standardError.write(Data("first error: \(error)\n".utf8))
    }
}

/// One worker's latencies (milliseconds) and errors in a row.
struct WorkerTiming: Sendable {
    private let firstError: FirstErrorReport
    private(set) var latencies: [Double] = []
    private(set) var errors = 0

    init(reportingFirstErrorTo firstError: FirstErrorReport) { self.firstError = firstError }

    mutating func succeeded(since begin: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - begin
        latencies.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }

    /// Counts an error, offering it as the row's first.
    mutating func failed(_ error: any Error) {
        if errors == 0 { firstError.offer(error) }
        errors += 1
    }

    /// Whether to make another call: before the deadline, and fewer than 100 000 calls so far.
    func goesOn(until deadline: ContinuousClock.Instant) -> Bool { ContinuousClock.now < deadline && latencies.count + errors < 100_000 }
}

/// Thrown by a row's work when its worker has used up what was prepared for it (codes): the
/// worker stops, and it counts as no error.
struct OutOfInput: Error {}

/// Latencies of one benchmark row.
struct Measurement {
    let latencies: [Double]
    let errors: Int
    let seconds: Double
    /// The server process's CPU time (user + system) during the row, when /proc tells it.
    let serverCPUSeconds: Double?
    /// The server process's resident memory at the end of the row (KiB), when /proc tells it.
    let serverResidentKiB: Int?

    func percentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        return latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
    }

    /// The errors, and one more when no request was answered: a row that measured nothing fails.
    var countedErrors: Int { errors + (latencies.isEmpty ? 1 : 0) }

    /// Prints the row (and, when it answered no request, says so on standard error); returns its
    /// ``countedErrors``.
    func report(_ name: String, _ concurrency: Int) -> Int {
        print(row(name, concurrency))
        if latencies.isEmpty { FileHandle.standardError.write(Data("no request answered in the row '\(name)' at concurrency \(concurrency)\n".utf8)) }
        return countedErrors
    }

    func row(_ name: String, _ concurrency: Int) -> String {
        let rate = Double(latencies.count) / seconds
        let cpu = serverCPUSeconds.flatMap { latencies.isEmpty ? nil : String(format: "%.2f", $0 * 1000 / Double(latencies.count)) } ?? "n/a"
        return
            "| \(name) | \(concurrency) | \(String(format: "%.1f", rate)) | \(String(format: "%.1f", percentile(0.5))) | \(String(format: "%.1f", percentile(0.99))) | \(cpu) | \(countedErrors) |"
    }
}

/// One full login: authorize, hosted page, password, code, tokens, ID-token validation.
struct FlowRunner: Sendable {
    let seed: DemoSeed
    let backend: RelyingParty

    func fullFlow(as user: BenchUser) async throws -> CompletedAuthorization {
        let request = try await backend.makeAuthorizationRequest(redirectURI: seed.backendRedirectURIs[0], scope: "openid profile")
        let redirect = try await LoginForm.redirect(for: request.url, username: user.username, password: user.password)
        return try await backend.completeAuthorization(redirect: redirect, pending: request.pending)
    }
}

/// One native login through the SDK: start, scenario, password, code exchange.
struct NativeFlowRunner: Sendable {
    let seed: DemoSeed
    let client: SignetClient

    func passwordLogin(as user: BenchUser) async throws -> TokenResponse {
        let parameters = AuthorizationParameters(clientID: seed.nativeClientID, redirectURI: seed.nativeRedirectURI)
        var step = try await client.nativeLogin().start(parameters)
        step = try await step.select(scenario: .usernamePassword)
        step = try await step.submit(username: user.username, password: user.password)
        guard case .finished(let result) = step.kind else { throw SignetError(.malformedMessage, "the native login did not finish") }
        return try await result.exchange()
    }
}

/// A benchmark user; each worker signs in as its own.
struct BenchUser: Sendable {
    let username: String
    let password: String
}

/// A worker's refresh token, rotated on every use.
final class RefreshChain: @unchecked Sendable {
    // Used by exactly one worker task at a time, so plain storage suffices.
    private var token: String
    init(_ token: String) { self.token = token }

    func refresh(with backend: RelyingParty) async throws -> Bool {
        let response = try await backend.refresh(token)
        guard let next = response.refreshToken else { throw SignetError(.malformedMessage, "no rotated refresh token") }
        token = next
        return true
    }
}

/// The rows of the table, for `--only`.
enum BenchRow: String, CaseIterable, ExpressibleByArgument {
    case flow, native, code, prepared, refresh, dpop
}

/// The CPU time a process has used, from Linux's /proc.
enum ProcessCPU {
    /// utime + stime of `pid` in seconds, or `nil` where /proc is not available.
    static func seconds(pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return nil }
        // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
        let fields = stat[afterName.upperBound...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) / ticks : nil
    }
}

/// A process's resident memory, from Linux's /proc.
enum ProcessMemory {
    /// The peak (VmHWM) in KiB, or `nil` where /proc is not available.
    static func peak(pid: Int32) -> Int? { field("VmHWM:", pid: pid) }

    /// The current (VmRSS) in KiB, or `nil` where /proc is not available.
    static func resident(pid: Int32) -> Int? { field("VmRSS:", pid: pid) }

    private static func field(_ name: String, pid: Int32) -> Int? {
        // "VmRSS:	   61234 kB"
        ProcStatus.value(name, in: "/proc/\(pid)/status").flatMap { Int($0.split(separator: " ").first ?? "") }
    }
}

/// A field of a Linux `/proc/…/status` file.
enum ProcStatus {
    /// The value after `key` (e.g. `VmRSS:`) in the status file at `path`, trimmed; `nil` when the
    /// file or the field is missing (no /proc, or the process or thread has ended).
    static func value(_ key: String, in path: String) -> String? {
        guard let status = try? String(contentsOfFile: path, encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key) })
        else { return nil }
        return line.dropFirst(key.count).trimmingCharacters(in: .whitespaces)
    }
}
