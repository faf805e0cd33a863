// `signet-bench --isolate`: the server on CPUs of its own, the load on the others.
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
/// Whole cores are split, so the server and the load do not share a core's caches as sibling
/// hardware threads; with a single core, its threads are split and the heading says so. What a
/// virtual machine's vCPUs share on the host cannot be seen from inside it.
///
/// Linux only. The affinity is set with util-linux's `taskset`, because Swift's Glibc module does
/// not import `sched_setaffinity` (it is behind `_GNU_SOURCE`).
struct CPUIsolation: Equatable {
    /// The server's CPUs: whole cores, in order, until it has at least half the CPUs (the load
    /// keeps at least one core).
    let server: [Int]
    /// The load's CPUs: the rest.
    let load: [Int]
    /// Whether the two share a core (there is only one), as sibling threads.
    var sharesCore = false

    /// Splits `allowed` CPUs between the server and the load, whole cores to each where there
    /// are two or more; `core` names a CPU's core (CPUs with the same name are its threads).
    static func split(_ allowed: [Int], core: (Int) -> String = { String($0) }) throws -> CPUIsolation {
        let cpus = Array(Set(allowed)).sorted()
        guard cpus.count >= 2 else { throw ValidationError("--isolate needs at least two online CPUs; this process may use \(cpus.count)") }
        // Cores in the order of their first CPU, each with its CPUs.
        var cores: [[Int]] = []
        var coreIndex: [String: Int] = [:]
        for cpu in cpus {
            let name = core(cpu)
            if let index = coreIndex[name] {
                cores[index].append(cpu)
            } else {
                coreIndex[name] = cores.count
                cores.append([cpu])
            }
        }
        guard cores.count >= 2 else {
            let serverCount = (cpus.count + 1) / 2
            return CPUIsolation(server: Array(cpus.prefix(serverCount)), load: Array(cpus.dropFirst(serverCount)), sharesCore: true)
        }
        // Cores of unequal thread counts (hybrid processors) are counted by their CPUs.
        var serverCores = 0
        var serverCPUs = 0
        while serverCores < cores.count - 1, serverCPUs * 2 < cpus.count {
            serverCPUs += cores[serverCores].count
            serverCores += 1
        }
        return CPUIsolation(server: cores.prefix(serverCores).flatMap { $0 }.sorted(), load: cores.dropFirst(serverCores).flatMap { $0 }.sorted())
    }

    /// The split of the CPUs this process may use that are online, by the cores the kernel reports.
    static func forThisMachine() throws -> CPUIsolation {
        guard var allowed = try allowedCPUs(of: "self") else {
            throw ValidationError("--isolate needs Linux (/proc/self/status has no Cpus_allowed_list)")
        }
        // An affinity list may name CPUs that are possible but offline (room for hot-plugging).
        if let online = try? String(contentsOfFile: "/sys/devices/system/cpu/online", encoding: .utf8) {
            let onlineCPUs = Set(try parseList(online.trimmingCharacters(in: .whitespacesAndNewlines)))
            allowed = allowed.filter(onlineCPUs.contains)
        }
        return try split(allowed) { cpu in
            let siblings = try? String(contentsOfFile: "/sys/devices/system/cpu/cpu\(cpu)/topology/thread_siblings_list", encoding: .utf8)
            return siblings?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "cpu\(cpu)"
        }
    }

    /// The CPUs process `pid` (or `self`) may use, or `nil` without `/proc`: its main thread's.
    static func allowedCPUs(of pid: String) throws -> [Int]? {
        try allowedCPUs(statusFile: "/proc/\(pid)/status")
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
        return cpus
    }

    /// The command that runs `executable` with `arguments` on the server's CPUs: `taskset` execs
    /// it, so the process keeps `taskset`'s process id and every thread it starts inherits the
    /// affinity.
    func serverCommand(_ executable: URL, _ arguments: [String]) -> (executable: URL, arguments: [String]) {
        (URL(fileURLWithPath: Self.taskset), ["--cpu-list", Self.list(server), executable.path] + arguments)
    }

    /// Moves every thread of this process to the load's CPUs; threads started later inherit it.
    /// A thread started during the move by one not yet moved would keep the old CPUs, so the
    /// move is made again until every thread is on the load's CPUs (a few tries).
    func pinThisProcess() throws {
        for _ in 0..<5 {
            let taskset = Process()
            taskset.executableURL = URL(fileURLWithPath: Self.taskset)
            taskset.arguments = ["--all-tasks", "--cpu-list", "--pid", Self.list(load), String(ProcessInfo.processInfo.processIdentifier)]
            taskset.standardOutput = FileHandle.nullDevice
            try taskset.run()
            taskset.waitUntilExit()
            guard taskset.terminationStatus == 0 else {
                throw ValidationError(
                    "taskset could not move this process to CPU \(Self.list(load)) (exit \(taskset.terminationStatus); its message is above)")
            }
            if try Self.strayThread(of: "self", from: load) == nil { return }
        }
        throw ValidationError("--isolate: threads of this process kept starting off CPU \(Self.list(load))")
    }

    /// Checks that `taskset` is there before anything starts.
    static func checkTaskset() throws {
        guard FileManager.default.isExecutableFile(atPath: taskset) else {
            throw ValidationError("--isolate needs util-linux's taskset at \(taskset)")
        }
    }

    /// Checks that every thread of the server (`serverPID`) and of this process runs where it
    /// was put, and says where.
    func confirmed(serverPID: Int32) throws -> String {
        for (pid, cpus, what) in [(String(serverPID), server, "server"), ("self", load, "load")] {
            if let found = try Self.strayThread(of: pid, from: cpus) {
                throw ValidationError("--isolate: a thread of the \(what) runs on CPU \(Self.list(found)), not on CPU \(Self.list(cpus))")
            }
        }
        return "server on CPU \(Self.list(server)), load on CPU \(Self.list(load))" + (sharesCore ? " (threads of one core)" : "")
    }

    private static let taskset = "/usr/bin/taskset"

    /// The CPUs of the first thread of process `pid` (or `self`) that may run elsewhere than
    /// on `cpus`, or `nil` when every thread runs there.
    private static func strayThread(of pid: String, from cpus: [Int]) throws -> [Int]? {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        guard !threads.isEmpty else { throw ValidationError("--isolate: the threads of process \(pid) cannot be read in /proc/\(pid)/task") }
        for thread in threads {
            // A thread that ended since the listing has no status left: nothing to check.
            guard let found = try allowedCPUs(statusFile: "/proc/\(pid)/task/\(thread)/status") else { continue }
            if found != cpus { return found }
        }
        return nil
    }

    private static func allowedCPUs(statusFile: String) throws -> [Int]? {
        try ProcStatus.value("Cpus_allowed_list:", in: statusFile).map(parseList)
    }

    static func list(_ cpus: [Int]) -> String { cpus.map(String.init).joined(separator: ",") }
}
