import Foundation
@testable import SignetServer
import SignetStore
import SignetTesting
import Testing

/// The shared budget's compare-and-swap: parallel takes never overspend, parallel give-backs
/// are never lost, and a budget of nothing is spent.
@Suite("Sliding window: parallel takes and give-backs")
struct SlidingWindowTests {
    private func window(_ store: MemoryStore) -> SlidingWindow { SlidingWindow(store: store, clock: TestClock().signetClock) }

    @Test("80 parallel takes of a 60-use budget: exactly 60 taken, the rest told when one is free")
    func parallelTakes() async throws {
        let store = MemoryStore()
        let window = window(store)
        let decisions = try await withThrowingTaskGroup(of: SlidingWindow.Decision.self) { group in
            for _ in 0..<80 { group.addTask { try await window.take("budget", maximum: 60, window: 3600) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(decisions.filter { $0 == .taken }.count == 60)
        #expect(decisions.allSatisfy { if case .spent(let after) = $0 { after >= 1 } else { true } })
        #expect(await store.limit(key: "budget")?.uses.count == 60)
    }

    @Test("60 parallel give-backs after 60 takes leave no use behind")
    func parallelGiveBacks() async throws {
        let store = MemoryStore()
        let window = window(store)
        for _ in 0..<60 { #expect(try await window.take("budget", maximum: 60, window: 3600) == .taken) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<60 { group.addTask { try await window.giveBack("budget", maximum: 60) } }
            try await group.waitForAll()
        }
        #expect(await store.limit(key: "budget")?.uses.isEmpty == true)
        // Given back, the budget is whole again.
        #expect(try await window.take("budget", maximum: 60, window: 3600) == .taken)
    }

    @Test("a budget of nothing is spent, and giving back to an empty budget changes nothing")
    func emptyBudgets() async throws {
        let store = MemoryStore()
        let window = window(store)
        #expect(try await window.take("none", maximum: 0, window: 60) == .spent(retryAfter: 60))
        try await window.giveBack("none", maximum: 0)
        #expect(await store.limit(key: "none") == nil)
    }
}
