// What an authorization grants, and the single-use values (codes, refresh tokens) issued from it.
// Secrets are stored only as hashes.
import Foundation
import SignetCore

/// What the user granted a client in one authorization: the family every token from it belongs to.
public struct GrantRecord: Sendable, Equatable {
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
public struct AuthorizationCodeRecord: Sendable, Equatable {
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
public struct RefreshTokenRecord: Sendable, Equatable {
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

extension GrantRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1,
        blank: GrantRecord(
            id: "", clientID: "", userID: "", scope: "", authTime: .distantPast, acr: "", amr: [], sessionID: nil, createdAt: .distantPast,
            expiresAt: .distantPast),
        [
            .member("id", \.id), .member("clientID", \.clientID), .member("userID", \.userID), .member("resources", \.resources),
            .member("userStamp", \.userStamp), .member("scope", \.scope), .member("authTime", \.authTime), .member("acr", \.acr),
            .member("amr", \.amr), .member("sessionID", \.sessionID), .member("instanceID", \.instanceID), .member("deviceID", \.deviceID),
            .member("createdAt", \.createdAt), .member("expiresAt", \.expiresAt), .member("revokedAt", \.revokedAt),
        ])
}

extension AuthorizationCodeRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1,
        blank: AuthorizationCodeRecord(
            codeHash: "", grantID: "", clientID: "", redirectURI: "", codeChallenge: "", nonce: nil, expiresAt: .distantPast),
        [
            .member("codeHash", \.codeHash), .member("grantID", \.grantID), .member("clientID", \.clientID), .member("redirectURI", \.redirectURI),
            .member("codeChallenge", \.codeChallenge), .member("nonce", \.nonce), .member("expiresAt", \.expiresAt),
            .member("redeemedAt", \.redeemedAt), .member("dpopJKT", \.dpopJKT),
        ])
}

extension RefreshTokenRecord: StoredRecord {
    public static let format = RecordFormat(
        version: 1, blank: RefreshTokenRecord(tokenHash: "", grantID: "", clientID: "", expiresAt: .distantPast),
        [
            .member("tokenHash", \.tokenHash), .member("grantID", \.grantID), .member("clientID", \.clientID), .member("expiresAt", \.expiresAt),
            .member("usedAt", \.usedAt), .member("dpopJKT", \.dpopJKT),
        ])
}
