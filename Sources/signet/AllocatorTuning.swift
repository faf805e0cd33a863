// `signet serve`: glibc's allocator keeps a thread's freed memory for the next request instead of returning it at once.
#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import Logging
import Synchronization

/// Raises glibc's trim threshold, so the memory a request frees stays with its thread's heap
/// for the next request instead of being given back to the kernel.
///
/// glibc's `malloc` returns the free memory at the top of a heap to the kernel (`madvise`) once
/// it passes the trim threshold: 128 KiB, until a freed block large enough to have been mapped
/// of its own raises it. Signet's hot path frees no such block, so the threshold stayed at
/// 128 KiB, and under load a thread's heap went back and forth across it, mostly at the end of
/// a SQLite statement (its statement journal's chunks) and of a statement builder: about one
/// `madvise` per token request, then one page fault when the memory was used again, each a
/// kernel entry and, in a process with several threads, a TLB flush on every CPU it runs on
/// (docs/performance.md). With these settings neither happens under load.
///
/// The cost is memory, bounded: each heap keeps up to ``trimThreshold`` free at its top, and
/// glibc gives each thread a heap of its own up to eight per CPU (8 MiB per CPU at worst).
/// Signet's threads that allocate are about two per CPU and a few more (an event loop and a
/// password-hashing thread per CPU, SQLite's flusher), so about 2 MiB per CPU in practice. A
/// block of ``mapThreshold`` or more is mapped of its own and given back when freed. Setting the thresholds by hand ends glibc's own
/// raising of them (up to 32 MiB for the mapping and 64 MiB for the trim threshold), which with
/// large blocks would keep more.
///
/// Only for `signet serve`; the other commands are short. An operator who set either threshold,
/// the top pad or the number of mapped blocks through the environment (`GLIBC_TUNABLES`, or
/// glibc's older `MALLOC_TRIM_THRESHOLD_`-style variables) keeps those settings: nothing is
/// changed then.
///
/// By hand through `dlsym`: Swift's Glibc module does not import `mallopt` from `<malloc.h>`.
enum AllocatorTuning {
    /// How much free memory each heap keeps at its top before returning the rest.
    static let trimThreshold: Int32 = 1 << 20
    /// The size from which a block is mapped of its own rather than taken from a heap.
    static let mapThreshold: Int32 = 512 << 10

    /// What was done at start.
    enum Outcome: Equatable {
        /// Both thresholds set.
        case applied
        /// The environment sets glibc's thresholds (the names found): left to it.
        case leftToEnvironment([String])
        /// Not glibc, or `mallopt` refused a setting.
        case unavailable(String)
    }

    /// What `signet serve` did at start (``applyAtStart()``), or `nil` before.
    static var atStart: Outcome? { recorded.withLock { $0 } }
    private static let recorded = Mutex<Outcome?>(nil)

    /// Applies the settings under this process's environment and records the outcome. Called by
    /// `main` for `serve`, first, before the server's threads start (glibc's manual wants
    /// `mallopt` called before other threads allocate).
    static func applyAtStart() {
        let outcome = apply(environment: ProcessInfo.processInfo.environment)
        recorded.withLock { $0 = outcome }
    }

    /// glibc's tunables (`GLIBC_TUNABLES=name=value:…`) that set what these settings set.
    private static let tunables: Set<String> = [
        "glibc.malloc.trim_threshold", "glibc.malloc.mmap_threshold", "glibc.malloc.top_pad", "glibc.malloc.mmap_max",
    ]
    /// The same settings' older environment variables.
    private static let variables: Set<String> = ["MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"]

    /// The settings of these thresholds that `environment` makes, by name; none means the
    /// settings apply. Others (the number of heaps, checks) are no reason to leave them.
    static func environmentSettings(in environment: [String: String]) -> [String] {
        variablesSet(in: environment) + tunablesSet(in: environment["GLIBC_TUNABLES"] ?? "")
    }

    /// The threshold tunables `list` names, read as glibc reads it: `name=value` pairs split by
    /// `:`, up to the first entry without `=`. A name given any value, even an empty one, counts:
    /// what glibc makes of it is the operator's to decide, not Signet's.
    private static func tunablesSet(in list: String) -> [String] {
        var named: [String] = []
        for entry in list.split(separator: ":", omittingEmptySubsequences: false) {
            guard let equals = entry.firstIndex(of: "=") else { break }
            let name = String(entry[..<equals])
            if tunables.contains(name) { named.append(name) }
        }
        return named
    }

    /// The older variables present, with any value.
    private static func variablesSet(in environment: [String: String]) -> [String] {
        variables.filter { environment[$0] != nil }.sorted()
    }

    /// Sets both thresholds unless `environment` sets them (``environmentSettings(in:)``).
    static func apply(environment: [String: String]) -> Outcome {
        let named = environmentSettings(in: environment)
        guard named.isEmpty else { return .leftToEnvironment(named) }
        #if canImport(Glibc)
            guard let mallopt = glibcMallopt else { return .unavailable("this C library has no mallopt") }
            // <malloc.h>: M_TRIM_THRESHOLD is -1 and M_MMAP_THRESHOLD -3; `mallopt` returns 1 on success.
            guard mallopt(-1, trimThreshold) == 1 else { return .unavailable("mallopt refused the trim threshold") }
            guard mallopt(-3, mapThreshold) == 1 else { return .unavailable("mallopt refused the mapping threshold (the trim threshold is set)") }
            return .applied
        #else
            return .unavailable("not glibc")
        #endif
    }

    /// Says in `logger`'s log what was done at start (`nil`: nothing was, which `main` should
    /// have done for `serve`).
    static func log(_ outcome: Outcome?, to logger: Logger) {
        switch outcome {
        case .applied:
            logger.info(
                "glibc's allocator keeps freed memory for reuse",
                metadata: [
                    "event": "allocator.tuned", "trim_threshold_bytes": .stringConvertible(trimThreshold),
                    "map_threshold_bytes": .stringConvertible(mapThreshold),
                ])
        case .leftToEnvironment(let names):
            logger.info(
                "glibc's allocator thresholds are left to the environment",
                metadata: ["event": "allocator.left_to_environment", "settings": .string(names.joined(separator: ","))])
        case .unavailable(let reason):
            logger.warning("glibc's allocator thresholds are unchanged", metadata: ["event": "allocator.unchanged", "reason": .string(reason)])
        case nil:
            logger.warning(
                "glibc's allocator thresholds are unchanged", metadata: ["event": "allocator.unchanged", "reason": "not applied at start"])
        }
    }

    #if canImport(Glibc)
        private typealias Mallopt = @convention(c) (Int32, Int32) -> Int32

        /// glibc's `mallopt`, or `nil` with another C library.
        private static let glibcMallopt: Mallopt? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return nil }
            return unsafeBitCast(symbol, to: Mallopt.self)
        }()
    #endif
}
