import Foundation
import SignetCore
@testable import SignetStorage
import SignetStore
import Testing

/// Each stored record's JSON is described once, by its member table and format version
/// (`StoredRecord`): both ways of writing it agree, both ways of reading it agree, a text of an
/// older format still reads, and one of a later format is refused.
@Suite("Stored records described once: the member table and the format version")
struct RecordFormatTests {
    let now = Date(timeIntervalSince1970: 1_764_172_800.123)

    func grant() -> GrantRecord {
        var grant = GrantRecord(
            id: "g", clientID: "c", userID: "u", scope: "openid", authTime: now, acr: "urn:signet:loa:1", amr: ["pwd"], sessionID: "s",
            createdAt: now, expiresAt: now.addingTimeInterval(60), revokedAt: now)
        grant.resources = ["https://api.example"]
        grant.userStamp = "stamp"
        grant.instanceID = "i"
        grant.deviceID = "d"
        return grant
    }

    /// Written by the table's writer and by Codable, read back by the table's reader and by Codable: all the same.
    func expectRoundTrips<R: StoredRecord & Equatable>(_ record: R) throws {
        let fast = String(decoding: record.jsonBytes(), as: UTF8.self)
        let codable = String(decoding: try SQLStore.encoder.encode(record), as: UTF8.self)
        #expect(fast == codable, "the table's writer writes what Codable writes, byte for byte")
        #expect(fast.contains("\"format\":\(R.format.version)"))
        guard case .object(let members) = JSONObjectMembers.scan(Array(fast.utf8)) else {
            Issue.record("not one object: \(fast)")
            return
        }
        #expect(try R(members: members) == record)
        #expect(try SQLStore.decoder.decode(R.self, from: Data(fast.utf8)) == record)
        #expect(try SQLStore.decode(R.self, fast) == record)
    }

    @Test("grants, codes and refresh tokens: the table's writer and Codable agree byte for byte, and both read back every member")
    func roundTrips() throws {
        try expectRoundTrips(grant())
        var code = AuthorizationCodeRecord(
            codeHash: "h\"\\", grantID: "g", clientID: "c", redirectURI: "https://rp.example/cb?x=1", codeChallenge: "ch", nonce: "n", expiresAt: now,
            redeemedAt: now)
        code.dpopJKT = "j"
        try expectRoundTrips(code)
        try expectRoundTrips(
            AuthorizationCodeRecord(codeHash: "h", grantID: "g", clientID: "c", redirectURI: "r", codeChallenge: "ch", nonce: nil, expiresAt: now))
        var refresh = RefreshTokenRecord(tokenHash: "t", grantID: "g", clientID: "c", expiresAt: now, usedAt: now)
        refresh.dpopJKT = "j"
        try expectRoundTrips(refresh)
    }

    @Test("a text written before formats were versioned reads as format 1; one of a later format is refused both ways, not half read")
    func versions() throws {
        let old = #"{"clientID":"c","expiresAt":1764172800123,"grantID":"g","tokenHash":"t"}"#
        #expect(try SQLStore.decode(RefreshTokenRecord.self, old) == RefreshTokenRecord(tokenHash: "t", grantID: "g", clientID: "c", expiresAt: now))
        let later = #"{"clientID":"c","expiresAt":1764172800123,"format":2,"grantID":"g","tokenHash":"t"}"#
        #expect(throws: SignetError.self) { try SQLStore.decode(RefreshTokenRecord.self, later) }
        #expect(throws: StoredFormatTooNew.self) { try SQLStore.decoder.decode(RefreshTokenRecord.self, from: Data(later.utf8)) }
    }

    @Test("a required member missing or of the wrong type is refused; an optional one missing is nil")
    func members() throws {
        #expect(throws: SignetError.self) {
            try SQLStore.decode(RefreshTokenRecord.self, #"{"clientID":"c","expiresAt":1,"format":1,"grantID":"g"}"#)
        }
        #expect(throws: SignetError.self) {
            try SQLStore.decode(RefreshTokenRecord.self, #"{"clientID":1,"expiresAt":1,"format":1,"grantID":"g","tokenHash":"t"}"#)
        }
        let minimal = try SQLStore.decode(RefreshTokenRecord.self, #"{"clientID":"c","expiresAt":1000,"format":1,"grantID":"g","tokenHash":"t"}"#)
        #expect(minimal.usedAt == nil && minimal.dpopJKT == nil)
    }

    @Test("texts stored before a member existed read with its default, as before: a client without the later switches, a user without locked")
    func defaultsOfLaterMembers() throws {
        let client = try SQLStore.decode(
            ClientRecord.self,
            #"{"allowedScopes":["openid"],"allowsRefreshTokens":true,"authMethod":"none","createdAt":1000,"id":"app","name":"App","postLogoutRedirectURIs":[],"redirectURIs":["com.example.app:/cb"]}"#
        )
        #expect(!client.nativeLogin && !client.requireDPoP && !client.fapi2 && client.facetIDs.isEmpty && client.resources.isEmpty)
        #expect(client.loginScenarios == nil && client.accessTokenLifetime == nil)
        let user = try SQLStore.decode(UserRecord.self, #"{"createdAt":1000,"id":"u","passwordHash":"h","username":"alice"}"#)
        #expect(user.locked == false && user.securityStamp == nil)
        // A required member of the first release is still required.
        #expect(throws: SignetError.self) {
            try SQLStore.decode(ClientRecord.self, #"{"authMethod":"none","createdAt":1000,"id":"app","name":"App"}"#)
        }
    }

    @Test("clients, users, login sessions, devices and authenticators: both writers agree and both readers read every member back")
    func moreRoundTrips() throws {
        var client = ClientRecord(
            id: "c", name: "C", authMethod: .privateKeyJWT, secretHash: "s", redirectURIs: ["https://rp.example/cb"],
            postLogoutRedirectURIs: ["https://rp.example/"],
            jwks: "{}", jwksURI: "https://rp.example/jwks", minimumACR: "urn:signet:loa:2", nativeLogin: true,
            requirePushedAuthorizationRequests: true,
            requireSignedRequestObject: true, appLaunchURLs: ["https://rp.example/app"], requireDPoP: true, resources: ["https://api.example"],
            fapi2: true,
            createdAt: now)
        client.loginScenarios = [.usernamePassword]
        client.authenticatorAAIDs = ["AAAA#0001"]
        client.facetIDs = ["https://rp.example"]
        client.accessTokenLifetime = 120.5
        client.codeLifetime = 30
        try expectRoundTrips(client)
        try expectRoundTrips(
            UserRecord(
                id: "u", username: "alice", passwordHash: "h", name: "A", email: "a@example.com", phoneNumber: "+45", locked: true,
                securityStamp: "s", createdAt: now))
        var request = ValidatedAuthorizationRequest(
            clientID: "c", redirectURI: "r", scope: "openid", state: "st", nonce: "n", codeChallenge: "ch", prompt: ["login"], maxAge: 5,
            loginHint: "h",
            acrValues: ["a"], uiLocales: ["da"], idTokenHintSubject: "sub")
        request.minimumACR = "m"
        request.returnByLink = true
        request.appLaunchURL = "https://rp.example/app"
        request.dpopJKT = "j"
        request.resources = ["https://api.example"]
        request.instanceID = "i"
        var session = LoginSessionRecord(
            id: "l", channel: .api, request: request, browserBindingHash: "b", csrfToken: "t", step: .smsCode, scenario: .usernamePasswordSMS,
            userID: "u",
            remembered: true, rememberMe: true, passwordAttempts: 2,
            sms: SMSChallenge(codeDigest: "d", phoneNumber: "+45", expiresAt: now, attempts: 1, sends: 2, lastSentAt: now, deliveryFailed: true),
            language: "da",
            expiresAt: now, version: 3)
        session.userStamp = "s"
        session.checkingUntil = now
        session.offeredSessionSID = "sid"
        session.deviceInstanceID = "i"
        try expectRoundTrips(session)
        let sessionText = String(decoding: session.jsonBytes(), as: UTF8.self)
        #expect(
            !sessionText.contains(#""request":{"format""#) && sessionText.components(separatedBy: "\"format\"").count == 2,
            "one version, the record's")
        var device = DeviceRecord(
            instanceID: "i", clientID: "c", userID: "u", grantID: "g", certificateSerial: "01", certificateThumbprint: "t", certificateNotAfter: now,
            attestation: "none", name: "Phone", platform: "ios", createdAt: now, revokedAt: now)
        device.lastUsedAt = now
        device.revocationReason = .replaced
        device.replacedBy = "j"
        try expectRoundTrips(device)
        var authenticator = AuthenticatorRecord(
            id: "a", userID: "u", instanceID: "i", clientID: "c", aaid: "AAAA#0001", keyID: "k", publicKey: "p", signatureAlgorithm: 1,
            publicKeyFormat: 256,
            slot: 0, signCounter: 4_000_000_000, registrationCounter: 7, pinKey: "pk", createdAt: now)
        authenticator.pinFailures = 2
        authenticator.pinBlockedUntil = now
        authenticator.cloneSuspectedAt = now
        authenticator.lastUsedAt = now
        authenticator.userStamp = "s"
        authenticator.registrationACR = "urn:signet:loa:2"
        try expectRoundTrips(authenticator)
    }
}
