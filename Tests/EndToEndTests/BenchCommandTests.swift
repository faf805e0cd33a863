import Foundation
import SignetTesting
import Testing

@testable import signet_bench

/// `signet-bench` is not a timed test: these check that its load gets every answer right and that
/// it reports what it promises, whatever the machine's speed.
@Suite("signet-bench: a short run under concurrent load")
struct BenchCommandTests {
    @Test(
        "the flow, code, prepared and refresh rows at concurrency 2 get no error, and (where /proc is) report CPU per request and memory after each row"
    )
    func shortRun() throws {
        // The bench's data folder goes in one of the tests' own, removed by a later run if this one is killed.
        let temporary = try TestFolder.make("bench")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let result = try SignetCommand.run(
            ["--seconds", "1", "--concurrency", "2", "--no-devices", "--password-hash-cost", "4", "--only", "flow", "code", "prepared", "refresh"],
            environment: ["TMPDIR": temporary.path], program: "signet-bench")
        #expect(result.status == 0, "\(result.all)")
        let rows = result.stdout.split(separator: "\n").filter { $0.hasPrefix("| full login flow |") || $0.hasPrefix("| token endpoint") }
        #expect(rows.count == 4, "\(result.stdout)")
        for row in rows {
            // | path | concurrency | requests/s | p50 ms | p99 ms | server CPU ms/request | errors |
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count == 7, "\(row)")
            guard cells.count == 7 else { continue }
            #expect(cells[1] == "2", "\(row)")
            #expect(cells[6] == "0", "\(row)")
            // A number only when the row answered at least one request (else `n/a`).
            if Self.hasProc { #expect(Double(cells[5]) != nil, "requests answered and the server's CPU per request measured: \(row)") }
        }
        #expect(result.stdout.contains("\nerrors: 0\n"), "\(result.stdout)")
        // The CPU and memory figures come from Linux's /proc.
        guard Self.hasProc else { return }
        let memory = result.stdout.split(separator: "\n").first { $0.hasPrefix("server resident memory after each row: ") }
        let figures = memory.map { $0.dropFirst("server resident memory after each row: ".count).dropLast(" MiB".count).split(separator: ", ") } ?? []
        #expect(figures.count == 4 && figures.allSatisfy { (Double($0) ?? 0) > 0 }, "\(result.stdout)")
    }

    @Test("--isolate puts the server and the load on CPUs of their own, says where, and gets no error", .enabled(if: canIsolate))
    func isolated() throws {
        let temporary = try TestFolder.make("bench")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let result = try SignetCommand.run(
            ["--seconds", "1", "--concurrency", "2", "--no-devices", "--password-hash-cost", "4", "--only", "prepared", "--isolate"],
            environment: ["TMPDIR": temporary.path], program: "signet-bench")
        #expect(result.status == 0, "\(result.all)")
        // The heading reports the placement, which the bench read back from /proc for every
        // thread of both processes and checked against its plan.
        let split = try CPUIsolation.forThisMachine()
        let placement = "server on CPU \(CPUIsolation.list(split.server)), load on CPU \(CPUIsolation.list(split.load))"
        #expect(result.stdout.contains(placement), "\(result.stdout)")
        let row = result.stdout.split(separator: "\n").first { $0.hasPrefix("| token endpoint, requests made beforehand") }
        let cells = row.map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
        // Requests answered (a CPU figure per request, only then) and none failed.
        #expect(cells.count == 7 && Double(cells[5]) != nil && cells[6] == "0", "\(result.stdout)")
        #expect(result.stdout.contains("\nerrors: 0\n"), "\(result.stdout)")
    }

    @Test("--isolate with --callgrind, or on one CPU, is refused with a reason")
    func isolateRefused() throws {
        let result = try SignetCommand.run(["--isolate", "--callgrind", "10"], program: "signet-bench")
        #expect(result.status != 0)
        #expect(result.stderr.contains("--isolate and --callgrind do not go together"), "\(result.all)")
        guard Self.canIsolate else { return }
        let first = try CPUIsolation.forThisMachine().server[0]
        let oneCPU = try SignetCommand.run(
            ["--isolate", "--seconds", "1", "--no-devices"], prefix: ["/usr/bin/taskset", "--cpu-list", String(first)], program: "signet-bench")
        #expect(oneCPU.status != 0)
        #expect(oneCPU.stderr.contains("--isolate needs at least two online CPUs"), "\(oneCPU.all)")
    }

    @Test("no concurrency level below 1 and no row shorter than a moment: refused before anything starts")
    func badNumbersRefused() throws {
        for (arguments, message) in [
            (["--concurrency", "0"], "--concurrency takes levels of 1 or more"),
            (["--concurrency", "4", "0"], "--concurrency takes levels of 1 or more"),
            (["--seconds", "0"], "--seconds must be more than 0"), (["--seconds=-3"], "--seconds must be more than 0"),
        ] {
            let result = try SignetCommand.run(["--no-devices"] + arguments, program: "signet-bench")
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.all)")
        }
    }

    /// Linux with /proc, at least two online CPUs for this process, and util-linux's taskset
    /// allowed to set a CPU affinity here (a sandbox may forbid it).
    private static var canIsolate: Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"), let split = try? CPUIsolation.forThisMachine() else { return false }
        guard let probe = try? ChildProcess.run("/usr/bin/taskset", ["--cpu-list", CPUIsolation.list(split.server), "/bin/true"]) else {
            return false
        }
        return probe.status == 0
    }

    private static var hasProc: Bool { FileManager.default.fileExists(atPath: "/proc/self/status") }
}
