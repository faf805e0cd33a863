// `signet bench --isolate`: the server on CPUs of its own, the load on the others.
import ArgumentParser
import Foundation

/// Which CPUs the benchmarked server runs on and which the load (this process) runs on.
///
/// Sharing every CPU with the load, the server's CPU time per request includes what the two
/// cost each other: caches and branch predictors refilled after the other ran, wake-ups sent
/// from one CPU to another (in a virtual machine, each an exit to the hypervisor), threads moved
/// between CPUs. With its clients on other machines, as in production, a server pays none of
/// that; giving it CPUs of its own is the nearest one machine comes.
///
/// Linux only. The affinity is set with util-linux's `taskset`, because Swift's Glibc module does
/// not import `sched_setaffinity` (it is behind `_GNU_SOURCE`).
struct CPUIsolation: Equatable {
    /// The server's CPUs: the first half (rounded up) of those this process may use.
    let server: [Int]
    /// The load's CPUs: the rest.
    let load: [Int]

    /// Splits `allowed` CPUs between the server and the load; at least two are needed.
    static func split(_ allowed: [Int]) throws -> CPUIsolation {
        let cpus = Array(Set(allowed)).sorted()
        guard cpus.count >= 2 else { throw ValidationError("--isolate needs at least two CPUs; this process may use \(cpus.count)") }
        let serverCount = (cpus.count + 1) / 2
        return CPUIsolation(server: Array(cpus.prefix(serverCount)), load: Array(cpus.dropFirst(serverCount)))
    }

    /// The CPUs this process may use, from `Cpus_allowed_list` in `/proc/self/status`.
    static func allowedCPUs() throws -> [Int] {
        guard let cpus = try allowedCPUs(of: "self") else { throw ValidationError("--isolate needs Linux (/proc/self/status has no Cpus_allowed_list)") }
        return cpus
    }

    /// The CPUs process `pid` (or `self`) may use, or `nil` without `/proc`.
    static func allowedCPUs(of pid: String) throws -> [Int]? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
        else { return nil }
        return try parseList(line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces))
    }

    /// Checks that the server (`serverPID`) and this process run where they were put, and says so.
    func confirmed(serverPID: Int32) throws -> String {
        let server = try Self.allowedCPUs(of: String(serverPID)) ?? []
        let load = try Self.allowedCPUs(of: "self") ?? []
        guard server == self.server, load == self.load else {
            throw ValidationError("--isolate: the server runs on CPU \(Self.list(server)) and the load on CPU \(Self.list(load)), not as placed")
        }
        return "server on CPU \(Self.list(server)), load on CPU \(Self.list(load))"
    }

    /// Parses a kernel CPU list such as `0-3,6,8-9`.
    static func parseList(_ list: String) throws -> [Int] {
        var cpus: [Int] = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
            switch bounds.count {
            case 1:
                guard let cpu = bounds[0], cpu >= 0 else { throw ValidationError("unreadable CPU list '\(list)'") }
                cpus.append(cpu)
            case 2:
                guard let low = bounds[0], let high = bounds[1], low >= 0, low <= high else { throw ValidationError("unreadable CPU list '\(list)'") }
                cpus += Array(low...high)
            default:
                throw ValidationError("unreadable CPU list '\(list)'")
            }
        }
        guard !cpus.isEmpty else { throw ValidationError("unreadable CPU list '\(list)'") }
        return cpus
    }

    /// The command that runs `executable` with `arguments` on the server's CPUs: `taskset` execs
    /// it, so the process keeps `taskset`'s process id and every thread it starts inherits the
    /// affinity.
    func serverCommand(_ executable: URL, _ arguments: [String]) -> (executable: URL, arguments: [String]) {
        (URL(fileURLWithPath: Self.taskset), ["--cpu-list", Self.list(server), executable.path] + arguments)
    }

    /// Moves every thread of this process to the load's CPUs; threads started later inherit it.
    func pinThisProcess() throws {
        let taskset = Process()
        taskset.executableURL = URL(fileURLWithPath: Self.taskset)
        taskset.arguments = ["--all-tasks", "--cpu-list", "--pid", Self.list(load), String(ProcessInfo.processInfo.processIdentifier)]
        taskset.standardOutput = FileHandle.nullDevice
        try taskset.run()
        taskset.waitUntilExit()
        guard taskset.terminationStatus == 0 else { throw ValidationError("taskset failed (exit \(taskset.terminationStatus)); --isolate needs util-linux's taskset") }
    }

    /// Checks that `taskset` is there before anything starts.
    static func checkTaskset() throws {
        guard FileManager.default.isExecutableFile(atPath: taskset) else { throw ValidationError("--isolate needs util-linux's taskset at \(taskset)") }
    }

    private static let taskset = "/usr/bin/taskset"

    private static func list(_ cpus: [Int]) -> String { cpus.map(String.init).joined(separator: ",") }
}
