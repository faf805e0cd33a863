// A login (or, later, a transaction) waiting to be approved in the authenticator app (issue 34).
import Foundation
import SignetCore

/// One pending approval: bound to a login in progress, its user and client, short-lived, decided
/// once, with what the phone shows (the client's name, what is asked, a reference the waiting
/// browser page shows too).
///
/// Stored by the SHA-256 of its id: the id travels in an app-switch link, a QR code or a push
/// payload and answers for the approval, like a code.
public struct ApprovalRecord: Sendable, Equatable {
    /// Where the approval stands. `pending` is the only state a decision leaves.
    public enum Status: String, Sendable, Codable, CaseIterable {
        case pending, approved, denied, expired, cancelled

        /// Whether the approval has ended (every status but `pending`).
        public var isFinal: Bool { self != .pending }
    }

    /// How the phone is reached, which decides what proves the user's presence at the browser.
    public enum Reach: String, Sendable, Codable, CaseIterable {
        /// The same device: a Universal Link / App Link opens the authenticator app.
        case appSwitch = "app_switch"
        /// Another device: an encrypted push to the user's activated devices.
        case push
        /// Another device: a QR code on the waiting page, scanned in the authenticator app.
        case qr

        /// Whether the browser and the phone are different devices, so the page shows a number
        /// the user must pick on the phone (number matching, against push fatigue and phishing).
        public var matchesNumber: Bool { self != .appSwitch }
    }

    /// SHA-256 (hex) of the approval id.
    public var idHash: String
    /// The login in progress this approval would finish.
    public var loginSessionID: String
    public var userID: String
    public var clientID: String
    /// What the phone shows: the client's display name and what is asked ("Log in to …").
    public var clientName: String
    public var action: String
    /// The short reference the browser page and the phone both show.
    public var reference: String
    public var reach: Reach
    /// The two-digit number the waiting page shows and the phone asks for (`nil` for app switch).
    public var matchNumber: Int?
    public var status: Status
    public var createdAt: Date
    public var expiresAt: Date
    /// When and by which activated device (instance id) the approval was decided.
    public var decidedAt: Date?
    public var decidedBy: String?

    public init(
        idHash: String, loginSessionID: String, userID: String, clientID: String, clientName: String, action: String, reference: String, reach: Reach,
        matchNumber: Int?, createdAt: Date, expiresAt: Date, status: Status = .pending
    ) {
        self.idHash = idHash
        self.loginSessionID = loginSessionID
        self.userID = userID
        self.clientID = clientID
        self.clientName = clientName
        self.action = action
        self.reference = reference
        self.reach = reach
        self.matchNumber = matchNumber
        self.status = status
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

extension ApprovalRecord.Status: StoredValue {}
extension ApprovalRecord.Reach: StoredValue {}

extension ApprovalRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1,
        blank: ApprovalRecord(
            idHash: "", loginSessionID: "", userID: "", clientID: "", clientName: "", action: "", reference: "", reach: .push, matchNumber: nil,
            createdAt: .distantPast, expiresAt: .distantPast),
        [
            .member("id_hash", \.idHash), .member("login_session_id", \.loginSessionID), .member("user_id", \.userID),
            .member("client_id", \.clientID), .member("client_name", \.clientName), .member("action", \.action),
            .member("reference", \.reference), .member("reach", \.reach), .member("match_number", \.matchNumber),
            .member("status", \.status), .member("created_at", \.createdAt), .member("expires_at", \.expiresAt),
            .member("decided_at", \.decidedAt), .member("decided_by", \.decidedBy),
        ])
}

/// Approvals waiting for the authenticator app.
public protocol ApprovalStore: Sendable {
    /// Adds `approval` unless its user would then have more than `pendingLimit` approvals pending
    /// and unexpired at `now`; `false` (nothing stored) when over. Under concurrency the limit is
    /// never exceeded (insert, then count, and take back an insert that went over: at worst both
    /// of two racing inserts are taken back).
    func insertApproval(_ approval: ApprovalRecord, pendingLimit: Int, now: Date) async throws -> Bool
    /// The approval whose id hashes to `idHash`, whatever its status.
    func approval(idHash: String) async throws -> ApprovalRecord?
    /// The user's approvals pending and unexpired at `now`, newest first (the app pulls them when
    /// pushes are off).
    func pendingApprovals(userID: String, now: Date) async throws -> [ApprovalRecord]
    /// Stores the decided `approval` if the stored one is still pending and unexpired at `now`:
    /// one conditional write, so of concurrent decisions exactly one is stored; `false` otherwise.
    func decideApproval(_ approval: ApprovalRecord, now: Date) async throws -> Bool
}
