import Foundation
import SignetCore
import SignetStore
import Synchronization
import Testing

@testable import SignetServer

@Suite("Approvals in the authenticator app: made, then decided once (issue 34's state machine)")
struct ApprovalFlowTests {
    let start = Date(timeIntervalSince1970: 1_764_000_000)
    let random = SecureRandom()

    func flow(at seconds: TimeInterval = 0, policy: ApprovalPolicy = ApprovalPolicy()) -> ApprovalFlow {
        ApprovalFlow(policy: policy, now: start.addingTimeInterval(seconds))
    }

    func approval(_ reach: ApprovalRecord.Reach = .push) -> ApprovalRecord {
        flow().make(
            idHash: "h", loginSessionID: "l", userID: "alice", clientID: "bank", clientName: "Bank", action: "Log in to Bank", reach: reach,
            random: random)
    }

    @Test("a new approval waits 3 minutes, shows a 5-letter reference, and a two-digit number only when the phone is another device")
    func made() {
        let pushed = approval(.push)
        #expect(pushed.status == .pending && pushed.expiresAt == start.addingTimeInterval(180))
        #expect(pushed.reference.count == 5 && pushed.reference.allSatisfy { ApprovalFlow.referenceAlphabet.contains($0) })
        #expect(pushed.matchNumber.map { (10...99).contains($0) } == true)
        #expect(approval(.qr).matchNumber != nil)
        #expect(approval(.appSwitch).matchNumber == nil, "same device: nothing to match")
    }

    @Test("approved once by the user's own device with the right number; every later decision is refused as decided")
    func approvedOnce() throws {
        let pending = approval(.push)
        let outcome = flow(at: 10).decide(.approve(instanceID: "phone", deviceUser: "alice", pickedNumber: pending.matchNumber), on: pending)
        let approved = try #require(outcome.store)
        #expect(outcome.refusal == nil)
        #expect(approved.status == .approved && approved.decidedBy == "phone" && approved.decidedAt == start.addingTimeInterval(10))
        for event in [
            ApprovalEvent.approve(instanceID: "phone", deviceUser: "alice", pickedNumber: pending.matchNumber),
            .deny(instanceID: "phone", deviceUser: "alice"), .cancel,
        ] {
            #expect(flow(at: 11).decide(event, on: approved) == ApprovalOutcome(store: nil, refusal: .decided(.approved)))
        }
    }

    @Test("another user's device is refused and changes nothing; a denial and a cancel are final")
    func refusals() {
        let pending = approval(.appSwitch)
        #expect(
            flow().decide(.approve(instanceID: "x", deviceUser: "mallory", pickedNumber: nil), on: pending)
                == ApprovalOutcome(store: nil, refusal: .otherUser))
        #expect(flow().decide(.deny(instanceID: "x", deviceUser: "mallory"), on: pending) == ApprovalOutcome(store: nil, refusal: .otherUser))
        #expect(flow().decide(.deny(instanceID: "phone", deviceUser: "alice"), on: pending).store?.status == .denied)
        #expect(flow().decide(.cancel, on: pending).store?.status == .cancelled)
        #expect(
            flow().decide(.approve(instanceID: "phone", deviceUser: "alice", pickedNumber: nil), on: pending).store?.status == .approved,
            "app switch needs no number")
    }

    @Test("number matching: a wrong or missing number ends the approval as denied; no second guess")
    func numberMatching() throws {
        let pending = approval(.qr)
        let right = try #require(pending.matchNumber)
        let wrong = right == 99 ? 98 : right + 1
        for picked in [wrong, nil] {
            let outcome = flow().decide(.approve(instanceID: "phone", deviceUser: "alice", pickedNumber: picked), on: pending)
            #expect(outcome.refusal == .wrongNumber)
            let denied = try #require(outcome.store)
            #expect(denied.status == .denied && denied.decidedBy == "phone")
            #expect(flow().decide(.approve(instanceID: "phone", deviceUser: "alice", pickedNumber: right), on: denied).refusal == .decided(.denied))
        }
    }

    @Test("at its expiry an approval has expired: no decision is taken, and it no longer counts against the user's pending limit")
    func expiry() {
        let pending = approval()
        #expect(flow(at: 179.9).status(of: pending) == .pending)
        #expect(flow(at: 180).status(of: pending) == .expired)
        #expect(
            flow(at: 180).decide(.approve(instanceID: "phone", deviceUser: "alice", pickedNumber: pending.matchNumber), on: pending)
                == ApprovalOutcome(store: nil, refusal: .decided(.expired)))
        let three = [pending, pending, pending]
        #expect(!flow(at: 10).mayAdd(pending: three), "three pending: a fourth is push fatigue")
        #expect(flow(at: 180).mayAdd(pending: three))
        #expect(flow(at: 10).mayAdd(pending: [pending, pending]))
    }

    @Test("the phone offers three different two-digit numbers, the right one among them, in every position over many draws")
    func choices() {
        var positions = Set<Int>()
        for _ in 0..<200 {
            let choices = ApprovalFlow.choices(for: 42, random: random)
            #expect(choices.count == 3 && Set(choices).count == 3 && choices.contains(42) && choices.allSatisfy { (10...99).contains($0) })
            positions.insert(choices.firstIndex(of: 42) ?? -1)
        }
        #expect(positions == [0, 1, 2])
        // Draws are uniform: bytes at or above the largest multiple of the bound are drawn again.
        let draws = Mutex(0)
        let skewed = SecureRandom { count in
            draws.withLock { $0 += 1 }
            return draws.withLock { $0 } == 1 ? Array(repeating: 250, count: count) : Array(repeating: 7, count: count)
        }
        #expect(ApprovalFlow.uniform(1, below: 90, random: skewed) == [7], "250 is above 180, the largest multiple of 90: drawn again")
        #expect(draws.withLock { $0 } == 2)
    }

    @Test("the record's JSON follows its table: both writers agree and both readers read every member back")
    func storedFormat() throws {
        var decided = approval(.push)
        decided.status = .approved
        decided.decidedAt = start
        decided.decidedBy = "phone"
        let text = String(decoding: decided.jsonBytes(), as: UTF8.self)
        #expect(text == String(decoding: try StoredJSON.encoder.encode(decided), as: UTF8.self))
        #expect(try StoredJSON.decoder.decode(ApprovalRecord.self, from: Data(text.utf8)) == decided)
        guard case .object(let members) = JSONObjectMembers.scan(Array(text.utf8)) else {
            Issue.record("not one object")
            return
        }
        #expect(try ApprovalRecord(members: members) == decided)
    }
}
