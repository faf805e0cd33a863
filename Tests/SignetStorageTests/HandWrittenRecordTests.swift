import Foundation
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetStore
import Testing

/// The two records a token request stores, written without `Codable` (``JSONObjectWritable``),
/// checked against the store's own `JSONEncoder` and read back with its decoder.
@Suite("Records the token endpoint stores, written by hand")
struct HandWrittenRecordTests {
    /// Whether a record's text carries its format version (a record, not a part of one).
    private static func isVersioned(_ value: Any) -> Bool {
        guard let record = value as? any StoredRecord else { return false }
        return versioned(record)
    }

    private static func versioned<R: StoredRecord>(_ record: R) -> Bool { R.format.version > 0 }

    private static let awkward = "a\"b\\c/d\u{1}é😀"

    private func expectSameAsCodable<T: JSONObjectWritable & Codable & Equatable & Sendable>(_ value: T) throws {
        let hand = try SQLStore.json(value)
        let codable = String(decoding: try SQLStore.encoder.encode(value), as: UTF8.self)
        let handObject = try #require(try JSONSerialization.jsonObject(with: Data(hand.utf8)) as? NSDictionary)
        let codableObject = try #require(try JSONSerialization.jsonObject(with: Data(codable.utf8)) as? NSDictionary)
        #expect(handObject == codableObject)
        // Every property, and the format version of a table-described record (StoredRecord).
        let expected = Mirror(reflecting: value).children.count + (Self.isVersioned(value) ? 1 : 0)
        #expect(handObject.count == expected, "a member of \(T.self) is missing from the test value or from writeJSON")
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
        let event = AuditEventRecord(
            id: "e", at: Date(), kind: "token.issued", userID: Self.awkward, clientID: "c", actor: "user", target: "t", reason: "r\n")
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
        grant = GrantRecord(
            id: "g", clientID: "c", userID: "u", scope: "", authTime: now, acr: "", amr: [], sessionID: nil, createdAt: now, expiresAt: now)
        try expectReadByHand(GrantRecord.self, String(decoding: try SQLStore.encoder.encode(grant), as: UTF8.self))

        var token = RefreshTokenRecord(tokenHash: "h", grantID: "g", clientID: "c", expiresAt: now, usedAt: now)
        token.dpopJKT = "t"
        try expectReadByHand(RefreshTokenRecord.self, try SQLStore.json(token))
        #expect(Mirror(reflecting: code).children.count == 9 && Mirror(reflecting: token).children.count == 6)
    }

    /// A login session with every member set, its request and SMS challenge too.
    private func fullLoginSession() -> LoginSessionRecord {
        var request = ValidatedAuthorizationRequest(
            clientID: "c", redirectURI: "https://rp.example/cb?x=1", scope: "openid profile", state: Self.awkward, nonce: "n", codeChallenge: "ch",
            prompt: ["login", "consent"], maxAge: 0, loginHint: "h", acrValues: ["urn:a", "urn:b"], uiLocales: ["da", "en"], idTokenHintSubject: "s")
        request.minimumACR = "urn:a"
        request.returnByLink = false
        request.appLaunchURL = "https://app.example/l"
        request.dpopJKT = "j"
        request.resources = ["https://api.example/"]
        request.instanceID = "i"
        var session = LoginSessionRecord(
            id: "id", channel: .api, request: request, browserBindingHash: "b", csrfToken: "t", step: .smsCode, scenario: .usernamePasswordSMS,
            userID: Self.awkward, remembered: true, rememberMe: false, passwordAttempts: 2,
            sms: SMSChallenge(
                codeDigest: "d", phoneNumber: "+4512345678", expiresAt: Date(timeIntervalSince1970: 1_764_172_801.25), attempts: 1, sends: 2,
                lastSentAt: Date(timeIntervalSince1970: 1_764_172_700.75), deliveryFailed: true),
            language: "da", expiresAt: Date(timeIntervalSince1970: 1_764_172_800.5), version: 7)
        session.userStamp = "st"
        session.checkingUntil = Date(timeIntervalSince1970: 1_764_172_750.125)
        session.offeredSessionSID = "sid"
        session.deviceInstanceID = "dev"
        return session
    }

    @Test("a login session, its request and its SMS challenge, every member set, written as Codable writes them")
    func loginSessionWritten() throws {
        let session = fullLoginSession()
        #expect(Mirror(reflecting: session.request).children.count == 18, "a member of ValidatedAuthorizationRequest is missing from this test")
        try expectSameAsCodable(session.request)
        try expectSameAsCodable(try #require(session.sms))
        try expectSameAsCodable(session)
        // And with the optionals left out (no member written, as `encodeIfPresent` writes none).
        let bare = LoginSessionRecord(
            id: "id", channel: .page,
            request: ValidatedAuthorizationRequest(clientID: "c", redirectURI: "r", scope: "", state: nil, nonce: nil, codeChallenge: "ch"),
            step: .usernamePassword, expiresAt: Date())
        #expect(try SQLStore.json(bare) == String(decoding: try SQLStore.encoder.encode(bare), as: UTF8.self))
    }

    @Test("a login session is read without Codable, as the store's decoder reads it, with or without its optionals")
    func loginSessionRead() throws {
        let session = fullLoginSession()
        try expectReadByHand(LoginSessionRecord.self, try SQLStore.json(session))
        try expectReadByHand(LoginSessionRecord.self, String(decoding: try SQLStore.encoder.encode(session), as: UTF8.self))
        var bare = session
        bare.sms = nil
        bare.scenario = nil
        bare.checkingUntil = nil
        bare.request.resources = nil
        bare.request.returnByLink = nil
        bare.request.maxAge = nil
        try expectReadByHand(LoginSessionRecord.self, try SQLStore.json(bare))
        // Dates in whole milliseconds come back exactly.
        #expect(try SQLStore.decode(LoginSessionRecord.self, try SQLStore.json(session)) == session)
    }

    @Test("a login session that is not plain falls back to the decoder: an unknown step is its error, a nested repeat its choice")
    func loginSessionNotPlain() throws {
        let text = try SQLStore.json(fullLoginSession())
        let unknownStep = text.replacingOccurrences(of: #""step":"sms_code""#, with: #""step":"teleport""#)
        #expect(unknownStep != text)
        #expect(throws: SignetError.self) { try SQLStore.decode(LoginSessionRecord.self, unknownStep) }
        let notBool = text.replacingOccurrences(of: #""remembered":true"#, with: #""remembered":1"#)
        #expect(notBool != text)
        #expect(throws: SignetError.self) { try SQLStore.decode(LoginSessionRecord.self, notBool) }
        // The nested request names its scope twice: the hand reader refuses it, JSONDecoder keeps one.
        let repeated = text.replacingOccurrences(of: #""scope":"openid profile""#, with: #""scope":"openid","scope":"openid profile""#)
        #expect(repeated != text)
        #expect(try SQLStore.decode(LoginSessionRecord.self, repeated) == SQLStore.decoder.decode(LoginSessionRecord.self, from: Data(repeated.utf8)))
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
