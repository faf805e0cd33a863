#if canImport(Glibc)
import Testing

@testable import signet

/// `signet serve`'s allocator settings (``AllocatorTuning``).
@Suite("signet serve's allocator settings")
struct AllocatorTuningTests {
    @Test("the settings apply unless the operator set glibc's allocator in the environment")
    func operatorSettingsWin() {
        #expect(AllocatorTuning.applies(environment: [:]))
        #expect(AllocatorTuning.applies(environment: ["GLIBC_TUNABLES": "glibc.pthread.rseq=0", "MALLOC": "x", "SIGNET_PORT": "8080"]))
        #expect(!AllocatorTuning.applies(environment: ["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"]))
        #expect(!AllocatorTuning.applies(environment: ["GLIBC_TUNABLES": "glibc.pthread.rseq=0:glibc.malloc.arena_max=2"]))
        #expect(!AllocatorTuning.applies(environment: ["MALLOC_TRIM_THRESHOLD_": "131072"]))
        #expect(!AllocatorTuning.applies(environment: ["MALLOC_MMAP_THRESHOLD_": "262144"]))
        // The number of heaps is another setting, which these do not touch.
        #expect(AllocatorTuning.applies(environment: ["MALLOC_ARENA_MAX": "2"]))
        #expect(!AllocatorTuning.apply(environment: ["MALLOC_TOP_PAD_": "0"]), "nothing is changed when the operator set the allocator")
    }

    /// What the settings do to a heap was measured in a process of its own (docs/performance.md):
    /// in a test process the thread shares its heap with the tests running beside it, so what
    /// is at the top of that heap, and when it is given back, is not the test's to say.
    @Test("glibc accepts both settings")
    func settingsAreAccepted() {
        #expect(AllocatorTuning.apply(environment: [:]), "mallopt found, and the trim and mapping thresholds accepted")
    }
}
#endif
