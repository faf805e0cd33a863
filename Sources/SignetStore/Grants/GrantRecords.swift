// What an authorization grants, and the single-use values (codes, refresh tokens) issued from it.
// Secrets are stored only as hashes.
import Foundation
import SignetCore

/// What the user granted a client in one authorization: the family every token from it belongs to.
public struct GrantRecord: Sendable, Equatable, Codable {
    public var id: String
    public var clientID: String
    public var userID: String
    /// resource — RFC 8707: the resources the authorization request named (empty: none named).
    public var resources: [String]?
    /// The user's security stamp when they signed in; the grant is dead once it changes.
    public var userStamp: String?
    public var scope: String
    public var authTime: Date
    public var acr: String
    public var amr: [String]
    public var sessionID: String?
    /// The app installation this grant activates (scope `device`), when it does.
    public var instanceID: String?
    /// The activated device the grant's tokens are bound to (its instance id), once one is:
    /// its refreshes need that device's certificate, and revoking the device revokes the grant.
    public var deviceID: String?
    public var createdAt: Date
    /// After this no refresh is possible, however often the token was rotated.
    public var expiresAt: Date
    public var revokedAt: Date?

    public init(
        id: String, clientID: String, userID: String, scope: String, authTime: Date, acr: String, amr: [String], sessionID: String?, createdAt: Date,
        expiresAt: Date, revokedAt: Date? = nil
    ) {
        self.id = id
        self.clientID = clientID
        self.userID = userID
        self.scope = scope
        self.authTime = authTime
        self.acr = acr
        self.amr = amr
        self.sessionID = sessionID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }
}

/// An authorization code, stored by the SHA-256 of its value, bound to everything it was issued for.
public struct AuthorizationCodeRecord: Sendable, Equatable, Codable {
    public var codeHash: String
    public var grantID: String
    public var clientID: String
    public var redirectURI: String
    public var codeChallenge: String
    public var nonce: String?
    public var expiresAt: Date
    public var redeemedAt: Date?
    /// dpop_jkt — RFC 9449 §10: the code may only be redeemed with a DPoP proof of this key.
    public var dpopJKT: String?

    public init(
        codeHash: String, grantID: String, clientID: String, redirectURI: String, codeChallenge: String, nonce: String?, expiresAt: Date,
        redeemedAt: Date? = nil
    ) {
        self.codeHash = codeHash
        self.grantID = grantID
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.nonce = nonce
        self.expiresAt = expiresAt
        self.redeemedAt = redeemedAt
    }
}

/// A refresh token, stored by the SHA-256 of its value.
public struct RefreshTokenRecord: Sendable, Equatable, Codable {
    public var tokenHash: String
    public var grantID: String
    public var clientID: String
    public var expiresAt: Date
    public var usedAt: Date?
    /// A public client's refresh token is bound to its DPoP key (RFC 9449 §5): the SHA-256 thumbprint.
    public var dpopJKT: String?

    public init(tokenHash: String, grantID: String, clientID: String, expiresAt: Date, usedAt: Date? = nil) {
        self.tokenHash = tokenHash
        self.grantID = grantID
        self.clientID = clientID
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

extension RefreshTokenRecord: JSONObjectWritable {
    /// The `Codable` members in sorted order, as the store's encoder writes records (one is
    /// stored on every token request; ``JSONObjectWritable``).
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("clientID", clientID)
        object.member("dpopJKT", dpopJKT)
        object.member("expiresAt", millisecondsOf: expiresAt)
        object.member("grantID", grantID)
        object.member("tokenHash", tokenHash)
        object.member("usedAt", millisecondsOf: usedAt)
    }
}

// Read on every token request (``JSONObjectReadable``): the same members as the `Codable`
// conformances, dates as the store's encoder writes them (milliseconds since 1970).

extension RefreshTokenRecord: JSONObjectReadable {
    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        tokenHash = try members.string("tokenHash")
        grantID = try members.string("grantID")
        clientID = try members.string("clientID")
        expiresAt = try members.date(millisecondsIn: "expiresAt")
        usedAt = try members.dateIfPresent(millisecondsIn: "usedAt")
        dpopJKT = try members.stringIfPresent("dpopJKT")
    }
}

extension AuthorizationCodeRecord: JSONObjectReadable {
    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        codeHash = try members.string("codeHash")
        grantID = try members.string("grantID")
        clientID = try members.string("clientID")
        redirectURI = try members.string("redirectURI")
        codeChallenge = try members.string("codeChallenge")
        nonce = try members.stringIfPresent("nonce")
        expiresAt = try members.date(millisecondsIn: "expiresAt")
        redeemedAt = try members.dateIfPresent(millisecondsIn: "redeemedAt")
        dpopJKT = try members.stringIfPresent("dpopJKT")
    }
}

extension GrantRecord: JSONObjectReadable {
    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        id = try members.string("id")
        clientID = try members.string("clientID")
        userID = try members.string("userID")
        resources = try members.stringsIfPresent("resources")
        userStamp = try members.stringIfPresent("userStamp")
        scope = try members.string("scope")
        authTime = try members.date(millisecondsIn: "authTime")
        acr = try members.string("acr")
        amr = try members.strings("amr")
        sessionID = try members.stringIfPresent("sessionID")
        instanceID = try members.stringIfPresent("instanceID")
        deviceID = try members.stringIfPresent("deviceID")
        createdAt = try members.date(millisecondsIn: "createdAt")
        expiresAt = try members.date(millisecondsIn: "expiresAt")
        revokedAt = try members.dateIfPresent(millisecondsIn: "revokedAt")
    }
}
