// Signed-in browsers and where they are kept.
import Foundation

/// A signed-in browser, found by the SHA-256 of its cookie value.
public struct BrowserSessionRecord: Sendable, Equatable {
    public var idHash: String
    /// A public identifier for the session (the ID token's `sid`).
    public var sid: String
    public var userID: String
    /// The user's security stamp when they signed in; the session is dead once it changes.
    public var userStamp: String?
    public var authTime: Date
    public var acr: String
    public var amr: [String]
    public var expiresAt: Date

    public init(idHash: String, sid: String, userID: String, authTime: Date, acr: String, amr: [String], expiresAt: Date) {
        self.idHash = idHash
        self.sid = sid
        self.userID = userID
        self.authTime = authTime
        self.acr = acr
        self.amr = amr
        self.expiresAt = expiresAt
    }
}

/// Signed-in browsers.
public protocol SessionStore: Sendable {
    /// Does not bind the answer to the disk (``WriteBinding``); ending a session does.
    func insertSession(_ session: BrowserSessionRecord) async throws
    func session(idHash: String) async throws -> BrowserSessionRecord?
    func deleteSession(idHash: String) async throws
    /// Ends every browser session of a user; returns how many there were.
    func deleteSessions(userID: String) async throws -> Int
}

extension BrowserSessionRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: BrowserSessionRecord(idHash: "", sid: "", userID: "", authTime: .distantPast, acr: "", amr: [], expiresAt: .distantPast),
        [
            .member("idHash", \.idHash), .member("sid", \.sid), .member("userID", \.userID), .member("userStamp", \.userStamp),
            .member("authTime", \.authTime), .member("acr", \.acr), .member("amr", \.amr), .member("expiresAt", \.expiresAt),
        ])
}
