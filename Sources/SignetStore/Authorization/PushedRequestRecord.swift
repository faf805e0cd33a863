// Pushed authorization requests (RFC 9126) and where they are kept.
import Foundation

/// A pushed authorization request (RFC 9126): the parameters a client sent to `/par`,
/// found by the SHA-256 of its `request_uri` and used once.
public struct PushedRequestRecord: Sendable, Equatable {
    public var uriHash: String
    public var clientID: String
    /// The pushed parameters as name–value pairs, in order (client authentication removed).
    public var parameters: [[String]]
    /// Whether they came from a verified request object (RFC 9101).
    public var signed: Bool?
    public var expiresAt: Date

    public init(uriHash: String, clientID: String, parameters: [[String]], signed: Bool = false, expiresAt: Date) {
        self.signed = signed
        self.uriHash = uriHash
        self.clientID = clientID
        self.parameters = parameters
        self.expiresAt = expiresAt
    }
}

/// Pushed authorization requests (RFC 9126).
public protocol PushedRequestStore: Sendable {
    func insertPushedRequest(_ request: PushedRequestRecord) async throws
    /// The request, left in place: what `/authorize` checks before it spends one.
    func pushedRequest(uriHash: String) async throws -> PushedRequestRecord?
    /// Removes and returns the request; exactly one concurrent caller gets it.
    func consumePushedRequest(uriHash: String) async throws -> PushedRequestRecord?
}

extension PushedRequestRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: PushedRequestRecord(uriHash: "", clientID: "", parameters: [], expiresAt: .distantPast),
        [
            .member("uri_hash", \.uriHash), .member("client_id", \.clientID), .codable("parameters", \.parameters), .member("signed", \.signed),
            .member("expires_at", \.expiresAt),
        ])
}
