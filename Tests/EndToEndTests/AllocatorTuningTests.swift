import Testing

@testable import signet

/// `signet serve`'s allocator settings (``AllocatorTuning``). That `serve` applies them, and says
/// so in its log, is checked on a real `serve` process (`ConfigurationTests.serveWithFile`): in a
/// test process, `mallopt` would change the allocator under the tests running beside it. Nothing
/// here reaches `mallopt`.
@Suite("signet serve's allocator settings")
struct AllocatorTuningTests {
    @Test("the settings are left to the environment when it sets glibc's thresholds, and only then")
    func environmentSettingsWin() {
        #expect(AllocatorTuning.environmentSettings(in: [:]).isEmpty)
        #expect(
            AllocatorTuning.environmentSettings(in: [
                "GLIBC_TUNABLES": "glibc.pthread.rseq=0:glibc.malloc.arena_max=2", "MALLOC_ARENA_MAX": "2", "MALLOC_CHECK_": "3",
                "SIGNET_PORT": "8080",
            ]).isEmpty)
        #expect(AllocatorTuning.environmentSettings(in: ["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"]) == ["glibc.malloc.trim_threshold"])
        #expect(
            AllocatorTuning.environmentSettings(in: ["GLIBC_TUNABLES": "glibc.pthread.rseq=0:glibc.malloc.mmap_threshold=65536"]) == [
                "glibc.malloc.mmap_threshold"
            ])
        #expect(
            AllocatorTuning.environmentSettings(in: ["MALLOC_TRIM_THRESHOLD_": "131072", "MALLOC_TOP_PAD_": "0"]) == [
                "MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_",
            ])
        #expect(AllocatorTuning.environmentSettings(in: ["MALLOC_MMAP_MAX_": "0"]) == ["MALLOC_MMAP_MAX_"])
        // GLIBC_TUNABLES as glibc reads it: parsing ends at the first entry without `=`.
        #expect(AllocatorTuning.environmentSettings(in: ["GLIBC_TUNABLES": "glibc.malloc.trim_threshold"]).isEmpty)
        #expect(AllocatorTuning.environmentSettings(in: ["GLIBC_TUNABLES": "glibc.pthread.rseq:glibc.malloc.top_pad=0"]).isEmpty)
        #expect(
            AllocatorTuning.environmentSettings(in: ["GLIBC_TUNABLES": "glibc.malloc.top_pad=:glibc.malloc.mmap_max=0"]) == [
                "glibc.malloc.top_pad", "glibc.malloc.mmap_max",
            ])
        // Nothing is changed then: no `mallopt` call is made.
        #expect(AllocatorTuning.apply(environment: ["MALLOC_MMAP_THRESHOLD_": "262144"]) == .leftToEnvironment(["MALLOC_MMAP_THRESHOLD_"]))
    }
}
