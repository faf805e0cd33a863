// `signet serve`: glibc's allocator keeps a thread's freed memory for the next request instead of returning it at once.
#if canImport(Glibc)
import Glibc
#endif

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
/// The cost is memory: each heap keeps up to ``trimThreshold`` free at its top, and a block of
/// ``mapThreshold`` or more is mapped of its own and given back when freed. glibc makes at most
/// eight heaps per CPU and Signet's threads are few (an event loop per CPU, SQLite's flusher,
/// the password-hashing pool), so that is a few MiB at most, and a server's memory stays flat
/// under sustained load (`signet bench` reports it). Setting the threshold by hand ends glibc's
/// own raising of it, so the mapping threshold is set too, to what that raising would have
/// reached for blocks of that size.
///
/// Only for `signet serve`; the other commands are short. An operator who set glibc's allocator
/// through its environment (`GLIBC_TUNABLES` naming `glibc.malloc.…`, or one of the `MALLOC_…_`
/// variables, such as `MALLOC_TRIM_THRESHOLD_`) keeps those settings: nothing is changed then.
///
/// By hand through `dlsym`: Swift's Glibc module does not import `mallopt` from `<malloc.h>`.
enum AllocatorTuning {
    /// How much free memory each heap keeps at its top before returning the rest.
    static let trimThreshold: Int32 = 4 << 20
    /// The size from which a block is mapped of its own rather than taken from a heap.
    static let mapThreshold: Int32 = 2 << 20

    /// Whether the settings would be applied under `environment`: not when the operator
    /// configured glibc's allocator there.
    static func applies(environment: [String: String]) -> Bool {
        if let tunables = environment["GLIBC_TUNABLES"], tunables.contains("glibc.malloc.") { return false }
        return !environment.keys.contains { $0.hasPrefix("MALLOC_") && $0.hasSuffix("_") }
    }

    /// Applies the settings unless ``applies(environment:)`` says not to; `true` when both were
    /// set. Call once, at the start of `main`.
    @discardableResult
    static func apply(environment: [String: String]) -> Bool {
        guard applies(environment: environment) else { return false }
        #if canImport(Glibc)
        guard let mallopt = glibcMallopt else { return false }
        // <malloc.h>: M_TRIM_THRESHOLD is -1 and M_MMAP_THRESHOLD -3; `mallopt` returns 1 on success.
        return mallopt(-1, trimThreshold) == 1 && mallopt(-3, mapThreshold) == 1
        #else
        return false
        #endif
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
