import Foundation
import SignetCore
import SignetServer
@testable import SignetStorage
import Testing

/// The two records a token request stores, written without `Codable` (``JSONObjectWritable``),
/// checked against the store's own `JSONEncoder` and read back with its decoder.
@Suite("Records the token endpoint stores, written by hand")
struct HandWrittenRecordTests {
    private static let awkward = "a\"b\\c/d\u{1}é😀"

    private func expectSameAsCodable<T: JSONObjectWritable & Codable & Equatable & Sendable>(_ value: T) throws {
        let hand = try SQLStore.json(value)
        let codable = String(decoding: try SQLStore.encoder.encode(value), as: UTF8.self)
        let handObject = try #require(try JSONSerialization.jsonObject(with: Data(hand.utf8)) as? NSDictionary)
        let codableObject = try #require(try JSONSerialization.jsonObject(with: Data(codable.utf8)) as? NSDictionary)
        #expect(handObject == codableObject)
        #expect(handObject.count == Mirror(reflecting: value).children.count, "a member of \(T.self) is missing from the test value or from writeJSON")
        // Read back exactly as what JSONEncoder wrote reads back, dates included.
        #expect(try SQLStore.decoder.decode(T.self, from: Data(hand.utf8)) == SQLStore.decoder.decode(T.self, from: Data(codable.utf8)))
    }

    @Test("a refresh token record, every member set")
    func refreshToken() throws {
        var record = RefreshTokenRecord(
            tokenHash: Self.awkward, grantID: "g", clientID: "https://c.example/x", expiresAt: Date(timeIntervalSince1970: 1_764_172_800.123_456),
            usedAt: Date())
        record.dpopJKT = "t"
        try expectSameAsCodable(record)
    }

    @Test("an audit event record, every member set")
    func auditEvent() throws {
        let event = AuditEventRecord(id: "e", at: Date(), kind: "token.issued", userID: Self.awkward, clientID: "c", actor: "user", target: "t", reason: "r\n")
        try expectSameAsCodable(event)
    }

    /// The record read by hand and by the store's `JSONDecoder` agree, and the hand-written reader answered.
    private func expectReadByHand<T: JSONObjectReadable & Equatable & Sendable>(_ type: T.Type, _ text: String) throws {
        let viaDecoder = try SQLStore.decoder.decode(T.self, from: Data(text.utf8))
        guard case .object(let members) = JSONObjectMembers.scan(Array(text.utf8)) else {
            Issue.record("not scanned: \(text)")
            return
        }
        #expect(try T(members: members) == viaDecoder)
        #expect(try SQLStore.decode(T.self, text) == viaDecoder)
    }

    @Test("the code, grant and refresh token records are read without Codable, as the store's decoder reads them")
    func readByHand() throws {
        let now = Date()
        var code = AuthorizationCodeRecord(
            codeHash: Self.awkward, grantID: "g", clientID: "c", redirectURI: "https://rp.example/cb?x=1", codeChallenge: "ch", nonce: "n",
            expiresAt: now, redeemedAt: now.addingTimeInterval(1))
        code.dpopJKT = "t"
        try expectReadByHand(AuthorizationCodeRecord.self, try SQLStore.json(code))
        try expectReadByHand(AuthorizationCodeRecord.self, String(decoding: try SQLStore.encoder.encode(code), as: UTF8.self))
        code.nonce = nil
        code.redeemedAt = nil
        code.dpopJKT = nil
        try expectReadByHand(AuthorizationCodeRecord.self, String(decoding: try SQLStore.encoder.encode(code), as: UTF8.self))

        var grant = GrantRecord(
            id: "g", clientID: "c", userID: Self.awkward, scope: "openid device", authTime: now, acr: "a", amr: ["pwd", "otp"], sessionID: "s",
            createdAt: now, expiresAt: now.addingTimeInterval(86400), revokedAt: now)
        grant.resources = ["https://api.example/", "urn:x"]
        grant.userStamp = "st"
        grant.instanceID = "i"
        grant.deviceID = "d"
        #expect(Mirror(reflecting: grant).children.count == 15, "a member of GrantRecord is missing from this test and perhaps from init(members:)")
        try expectReadByHand(GrantRecord.self, String(decoding: try SQLStore.encoder.encode(grant), as: UTF8.self))
        grant = GrantRecord(id: "g", clientID: "c", userID: "u", scope: "", authTime: now, acr: "", amr: [], sessionID: nil, createdAt: now, expiresAt: now)
        try expectReadByHand(GrantRecord.self, String(decoding: try SQLStore.encoder.encode(grant), as: UTF8.self))

        var token = RefreshTokenRecord(tokenHash: "h", grantID: "g", clientID: "c", expiresAt: now, usedAt: now)
        token.dpopJKT = "t"
        try expectReadByHand(RefreshTokenRecord.self, try SQLStore.json(token))
        #expect(Mirror(reflecting: code).children.count == 9 && Mirror(reflecting: token).children.count == 6)
    }

    @Test("a stored record that is not plain is still read, by the store's decoder")
    func notPlainFallsBack() throws {
        // A hand-edited row naming a member twice: the strict scan refuses it, JSONDecoder keeps one.
        let text = #"{"clientID":"c","expiresAt":1.7641728e12,"grantID":"g","tokenHash":"h","tokenHash":"h2","usedAt":null}"#
        guard case .repeated = JSONObjectMembers.scan(Array(text.utf8)) else {
            Issue.record("the scan should refuse a repeated name")
            return
        }
        #expect(try SQLStore.decode(RefreshTokenRecord.self, text) == SQLStore.decoder.decode(RefreshTokenRecord.self, from: Data(text.utf8)))
        // Not readable either way: the store's error, not a crash.
        #expect(throws: SignetError.self) { try SQLStore.decode(RefreshTokenRecord.self, #"{"clientID":"c"}"#) }
    }
}
