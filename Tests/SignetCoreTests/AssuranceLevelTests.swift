import SignetCore
import Testing

@Suite("Assurance levels")
struct AssuranceLevelTests {
    @Test("an acr satisfies acr_values when asked for or stronger than the weakest asked; missing or unknown never")
    func satisfies() {
        let one = AssuranceLevel.oneFactor, two = AssuranceLevel.twoFactors
        #expect(AssuranceLevel.satisfies(acr: nil, requested: []))
        #expect(AssuranceLevel.satisfies(acr: two, requested: [two]))
        #expect(AssuranceLevel.satisfies(acr: two, requested: [one]))
        #expect(AssuranceLevel.satisfies(acr: one, requested: [two, one]))
        #expect(!AssuranceLevel.satisfies(acr: one, requested: [two]))
        #expect(!AssuranceLevel.satisfies(acr: nil, requested: [two]))
        #expect(!AssuranceLevel.satisfies(acr: "urn:other:gold", requested: [two]))
        #expect(AssuranceLevel.satisfies(acr: "urn:other:gold", requested: ["urn:other:gold"]))
    }
}
