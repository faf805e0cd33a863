import SignetCore
import Testing

@Suite("Secure random bytes")
struct SecureRandomTests {
    @Test("every length gets exactly that many bytes, across the eight-byte words they are drawn in")
    func lengths() {
        let random = SecureRandom()
        for count in [0, 1, 7, 8, 9, 15, 16, 17, 32, 33, 64] {
            #expect(random.bytes(count).count == count)
        }
    }

    @Test("draws differ and fill every position (no byte left at zero by the word copy)")
    func draws() {
        let random = SecureRandom()
        let draws = (0..<64).map { _ in random.bytes(33) }
        #expect(Set(draws).count == draws.count)
        // Each position, over 64 draws, is non-zero at least once (a stuck zero has odds 256^-64).
        for position in 0..<33 {
            #expect(draws.contains { $0[position] != 0 }, "position \(position)")
        }
    }
}
