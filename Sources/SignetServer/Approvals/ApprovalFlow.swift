// Approvals in the authenticator app as one pure state machine (issue 34): made, then decided once.
import Foundation
import SignetCore
import SignetStore

/// The settings of approvals in the authenticator app.
struct ApprovalPolicy: Sendable, Equatable {
    /// How long an approval waits for the phone (seed 001's app switch, NemID's AwaitingAppApproval).
    var lifetime: TimeInterval = 180
    /// Pending approvals one user may have at once: more would be push fatigue.
    var maximumPendingPerUser = 3
}

/// A decision the authenticator app sends for an approval.
enum ApprovalEvent: Sendable, Equatable {
    /// The user approved on the activated device `instanceID` of user `deviceUser`, whose UAF
    /// assertion over the approval's text has been verified; `pickedNumber` is the number the
    /// user chose for other-device approvals.
    case approve(instanceID: String, deviceUser: String, pickedNumber: Int?)
    /// "This wasn't me": the user refused on the device.
    case deny(instanceID: String, deviceUser: String)
    /// The login it belongs to was cancelled or replaced in the browser.
    case cancel
}

/// What a decision comes to: the approval to store, if anything changes, and the refusal, if any.
struct ApprovalOutcome: Sendable, Equatable {
    let store: ApprovalRecord?
    let refusal: ApprovalRefusal?
}

/// Why a decision is refused. Each leaves the approval as it was, except a wrong number, which
/// ends it: a guess must not get a second try.
enum ApprovalRefusal: Error, Sendable, Equatable {
    /// The approval was decided already (approved, denied, cancelled) or has expired.
    case decided(ApprovalRecord.Status)
    /// The deciding device belongs to another user.
    case otherUser
    /// Number matching: no number, or not the one the page shows; the approval is denied.
    case wrongNumber
}

/// Every rule of an approval. A value with no I/O: time and randomness are passed in, and the
/// caller stores what it returns with one conditional write (the status still `pending`), so of
/// two concurrent decisions one wins.
struct ApprovalFlow: Sendable {
    let policy: ApprovalPolicy
    let now: Date

    /// The letters of a reference: no 0/O, 1/I/L, so it can be read aloud and compared by eye.
    static let referenceAlphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")

    /// A new approval for `login`, waiting for the phone until ``ApprovalPolicy/lifetime``.
    func make(
        idHash: String, loginSessionID: String, userID: String, clientID: String, clientName: String, action: String, reach: ApprovalRecord.Reach,
        random: SecureRandom
    ) -> ApprovalRecord {
        ApprovalRecord(
            idHash: idHash, loginSessionID: loginSessionID, userID: userID, clientID: clientID, clientName: clientName, action: action,
            reference: Self.reference(random: random), reach: reach, matchNumber: reach.matchesNumber ? Self.matchNumber(random: random) : nil,
            createdAt: now, expiresAt: now.addingTimeInterval(policy.lifetime))
    }

    /// Where `approval` stands now: a pending one past its expiry has expired.
    func status(of approval: ApprovalRecord) -> ApprovalRecord.Status {
        approval.status == .pending && now >= approval.expiresAt ? .expired : approval.status
    }

    /// Whether `user`, with `pending` approvals not yet decided or expired, may be sent another.
    func mayAdd(pending: [ApprovalRecord]) -> Bool {
        pending.filter { status(of: $0) == .pending }.count < policy.maximumPendingPerUser
    }

    /// What `event` does to `approval`: the record to store (with one conditional write, while
    /// still `pending`), and why the event is refused. A refusal stores nothing, except a wrong
    /// number, which ends the approval as denied.
    func decide(_ event: ApprovalEvent, on approval: ApprovalRecord) -> ApprovalOutcome {
        let current = status(of: approval)
        guard current == .pending else { return ApprovalOutcome(store: nil, refusal: .decided(current)) }
        var decided = approval
        decided.decidedAt = now
        switch event {
        case .approve(let instanceID, let deviceUser, let picked):
            guard deviceUser == approval.userID else { return ApprovalOutcome(store: nil, refusal: .otherUser) }
            decided.decidedBy = instanceID
            if let expected = approval.matchNumber, picked != expected {
                decided.status = .denied
                return ApprovalOutcome(store: decided, refusal: .wrongNumber)
            }
            decided.status = .approved
        case .deny(let instanceID, let deviceUser):
            guard deviceUser == approval.userID else { return ApprovalOutcome(store: nil, refusal: .otherUser) }
            decided.decidedBy = instanceID
            decided.status = .denied
        case .cancel:
            decided.status = .cancelled
        }
        return ApprovalOutcome(store: decided, refusal: nil)
    }

    /// A short reference (5 letters of ``referenceAlphabet``) shown on the page and the phone.
    static func reference(random: SecureRandom) -> String {
        String(uniform(5, below: referenceAlphabet.count, random: random).map { referenceAlphabet[$0] })
    }

    /// A two-digit number, 10 to 99.
    static func matchNumber(random: SecureRandom) -> Int {
        10 + uniform(1, below: 90, random: random)[0]
    }

    /// The three numbers the phone offers: `number` and two other two-digit numbers, in an order
    /// that says nothing of which is right.
    static func choices(for number: Int, random: SecureRandom) -> [Int] {
        var choices = [number]
        while choices.count < 3 {
            let other = matchNumber(random: random)
            if !choices.contains(other) { choices.append(other) }
        }
        // Fisher–Yates with unbiased indexes.
        for index in stride(from: choices.count - 1, to: 0, by: -1) {
            choices.swapAt(index, uniform(1, below: index + 1, random: random)[0])
        }
        return choices
    }

    /// `count` values in 0..<`bound`, each uniform (bytes above the largest multiple of `bound` are drawn again).
    static func uniform(_ count: Int, below bound: Int, random: SecureRandom) -> [Int] {
        precondition(bound > 0 && bound <= 256)
        let limit = 256 - 256 % bound
        var values: [Int] = []
        while values.count < count {
            for byte in random.bytes(count - values.count) where Int(byte) < limit && values.count < count {
                values.append(Int(byte) % bound)
            }
        }
        return values
    }
}
