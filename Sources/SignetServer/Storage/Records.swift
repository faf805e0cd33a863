// The records the provider stores. Secrets are stored only as hashes.
import Foundation
import SignetCore

/// A registered OAuth client — RFC 7591 §2 names the fields.
public struct ClientRecord: Sendable, Equatable, Codable {
    /// How a client proves who it is at the token endpoint — RFC 7591 §2 `token_endpoint_auth_method`.
    public enum AuthMethod: String, Sendable, Codable, CaseIterable {
        case none
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        case privateKeyJWT = "private_key_jwt"

        /// Whether the client authenticates with a shared secret.
        public var usesSecret: Bool { self == .clientSecretBasic || self == .clientSecretPost }
    }

    /// client_id
    public var id: String
    /// client_name
    public var name: String
    public var authMethod: AuthMethod
    /// SHA-256 of the client secret (hex), for the secret methods. Secrets are 256-bit random, so a fast hash suffices.
    public var secretHash: String?
    /// redirect_uris, matched exactly (loopback: any port).
    public var redirectURIs: [String]
    /// post_logout_redirect_uris — RP-Initiated Logout §3.1
    public var postLogoutRedirectURIs: [String]
    /// jwks — the client's public keys as JWKS JSON, for private_key_jwt.
    public var jwks: String?
    /// jwks_uri — where the client publishes its keys, for private_key_jwt.
    public var jwksURI: String?
    /// The scopes the client may ask for.
    public var allowedScopes: [String]
    /// Whether the client receives refresh tokens.
    public var allowsRefreshTokens: Bool
    /// The native login scenarios the client may use; `nil` means all.
    public var loginScenarios: [LoginScenario]?
    /// min_acr: the least assurance every login for this client must reach, whatever its
    /// `acr_values` ask (an attacker can edit those); `nil`: what the request asks.
    public var minimumACR: String?
    /// Whether the client may use the native login API. It returns codes without a browser
    /// redirect, so it is off unless the client is registered for it.
    public var nativeLogin: Bool
    /// require_pushed_authorization_requests — RFC 9126 §6: its requests must come through `/par`.
    public var requirePushedAuthorizationRequests: Bool
    /// require_signed_request_object — RFC 9101 §10.5: its requests must be signed request objects.
    public var requireSignedRequestObject: Bool
    /// The `app_launch_url` values the client may send (https, exact match).
    public var appLaunchURLs: [String]
    /// dpop_bound_access_tokens — RFC 9449 §5.2: the client's tokens must be DPoP-bound.
    public var requireDPoP: Bool
    /// The resources (RFC 8707) the client may ask tokens for; the first is its default audience.
    public var resources: [String]
    /// Whether the client follows the FAPI 2.0 Security Profile: see ``FAPI2Profile`` for every
    /// rule this turns on, at registration and on each request.
    public var fapi2: Bool
    /// The FIDO UAF authenticators (AAIDs) the client's users may register; `nil`: every one of
    /// ``AuthenticatorCatalog`` (docs/authenticators.md).
    public var authenticatorAAIDs: [String]?
    /// The app's trusted facet ids (`ios:bundle-id:…`, `android:apk-key-hash:…`), served at its
    /// UAF `appID` (FIDO AppID and Facet §3); a UAF response from any other facet is refused.
    public var facetIDs: [String]
    public var createdAt: Date

    public init(id: String, name: String, authMethod: AuthMethod, secretHash: String? = nil, redirectURIs: [String], postLogoutRedirectURIs: [String] = [], jwks: String? = nil, jwksURI: String? = nil, allowedScopes: [String] = ["openid", "profile", "email", "phone", "offline_access"], allowsRefreshTokens: Bool = true, minimumACR: String? = nil, nativeLogin: Bool = false, requirePushedAuthorizationRequests: Bool = false, requireSignedRequestObject: Bool = false, appLaunchURLs: [String] = [], requireDPoP: Bool = false, resources: [String] = [], fapi2: Bool = false, createdAt: Date) {
        self.fapi2 = fapi2
        self.facetIDs = []
        self.id = id
        self.name = name
        self.authMethod = authMethod
        self.secretHash = secretHash
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.jwks = jwks
        self.jwksURI = jwksURI
        self.allowedScopes = allowedScopes
        self.allowsRefreshTokens = allowsRefreshTokens
        self.minimumACR = minimumACR
        self.nativeLogin = nativeLogin
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        self.requireSignedRequestObject = requireSignedRequestObject
        self.appLaunchURLs = appLaunchURLs
        self.requireDPoP = requireDPoP
        self.resources = resources
        self.createdAt = createdAt
    }

    // The stored names are the property names; members added later are optional when read.
    enum CodingKeys: String, CodingKey {
        case id, name, authMethod, secretHash, redirectURIs, postLogoutRedirectURIs, jwks, jwksURI, allowedScopes, allowsRefreshTokens
        case loginScenarios, minimumACR, nativeLogin, requirePushedAuthorizationRequests, requireSignedRequestObject, appLaunchURLs, requireDPoP, resources, fapi2, createdAt
        case authenticatorAAIDs, facetIDs
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        authMethod = try container.decode(AuthMethod.self, forKey: .authMethod)
        secretHash = try container.decodeIfPresent(String.self, forKey: .secretHash)
        redirectURIs = try container.decode([String].self, forKey: .redirectURIs)
        postLogoutRedirectURIs = try container.decode([String].self, forKey: .postLogoutRedirectURIs)
        jwks = try container.decodeIfPresent(String.self, forKey: .jwks)
        jwksURI = try container.decodeIfPresent(String.self, forKey: .jwksURI)
        allowedScopes = try container.decode([String].self, forKey: .allowedScopes)
        allowsRefreshTokens = try container.decode(Bool.self, forKey: .allowsRefreshTokens)
        loginScenarios = try container.decodeIfPresent([LoginScenario].self, forKey: .loginScenarios)
        minimumACR = try container.decodeIfPresent(String.self, forKey: .minimumACR)
        nativeLogin = try container.decodeIfPresent(Bool.self, forKey: .nativeLogin) ?? false
        requirePushedAuthorizationRequests = try container.decodeIfPresent(Bool.self, forKey: .requirePushedAuthorizationRequests) ?? false
        requireSignedRequestObject = try container.decodeIfPresent(Bool.self, forKey: .requireSignedRequestObject) ?? false
        appLaunchURLs = try container.decodeIfPresent([String].self, forKey: .appLaunchURLs) ?? []
        requireDPoP = try container.decodeIfPresent(Bool.self, forKey: .requireDPoP) ?? false
        resources = try container.decodeIfPresent([String].self, forKey: .resources) ?? []
        fapi2 = try container.decodeIfPresent(Bool.self, forKey: .fapi2) ?? false
        authenticatorAAIDs = try container.decodeIfPresent([String].self, forKey: .authenticatorAAIDs)
        facetIDs = try container.decodeIfPresent([String].self, forKey: .facetIDs) ?? []
        createdAt = try container.decode(Date.self, forKey: .createdAt)
    }
}

/// A person who can sign in.
public struct UserRecord: Sendable, Equatable, Codable {
    /// The stable subject identifier (`sub`), a random UUID.
    public var id: String
    /// The sign-in name, stored in lower case.
    public var username: String
    /// The password hash in the hasher's own format (bcrypt `$2b$…`).
    public var passwordHash: String
    public var name: String?
    public var email: String?
    public var phoneNumber: String?
    /// A locked user cannot sign in; locking also ends every session and grant.
    public var locked: Bool
    /// Changes whenever the password is set or the user is locked, so a login that checked the
    /// old password cannot finish after the change. `nil` for users stored before it existed.
    public var securityStamp: String?
    public var createdAt: Date

    public init(id: String, username: String, passwordHash: String, name: String? = nil, email: String? = nil, phoneNumber: String? = nil, locked: Bool = false, securityStamp: String? = nil, createdAt: Date) {
        self.securityStamp = securityStamp
        self.id = id
        self.username = username
        self.passwordHash = passwordHash
        self.name = name
        self.email = email
        self.phoneNumber = phoneNumber
        self.locked = locked
        self.createdAt = createdAt
    }

    // The stored names are the property names; members added later are optional when read.
    enum CodingKeys: String, CodingKey {
        case id, username, passwordHash, name, email, phoneNumber, locked, securityStamp, createdAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        username = try container.decode(String.self, forKey: .username)
        passwordHash = try container.decode(String.self, forKey: .passwordHash)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        phoneNumber = try container.decodeIfPresent(String.self, forKey: .phoneNumber)
        locked = try container.decodeIfPresent(Bool.self, forKey: .locked) ?? false
        securityStamp = try container.decodeIfPresent(String.self, forKey: .securityStamp)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
    }
}

/// A signing key of the provider and where it is in its life.
public struct SigningKeyRecord: Sendable, Equatable, Codable {
    /// next: published, not yet signing. active: signing. retired: published until its tokens expire.
    public enum Status: String, Sendable, Codable { case next, active, retired }

    public var kid: String
    public var algorithm: String
    /// The private key, PEM (PKCS#8).
    public var privateKeyPEM: String
    public var status: Status
    public var createdAt: Date
    /// When a retired key may leave the JWKS: retirement plus the longest token lifetime.
    public var publishUntil: Date?

    public init(kid: String, algorithm: String = "ES256", privateKeyPEM: String, status: Status, createdAt: Date, publishUntil: Date? = nil) {
        self.kid = kid
        self.algorithm = algorithm
        self.privateKeyPEM = privateKeyPEM
        self.status = status
        self.createdAt = createdAt
        self.publishUntil = publishUntil
    }
}

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

    public init(id: String, clientID: String, userID: String, scope: String, authTime: Date, acr: String, amr: [String], sessionID: String?, createdAt: Date, expiresAt: Date, revokedAt: Date? = nil) {
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

    public init(codeHash: String, grantID: String, clientID: String, redirectURI: String, codeChallenge: String, nonce: String?, expiresAt: Date, redeemedAt: Date? = nil) {
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

/// A signed-in browser, found by the SHA-256 of its cookie value.
public struct BrowserSessionRecord: Sendable, Equatable, Codable {
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

/// Failed sign-in attempts counted under one key (an account name or a source address).
public struct ThrottleRecord: Sendable, Equatable, Codable {
    public var key: String
    public var failures: Int
    public var lastFailureAt: Date

    public init(key: String, failures: Int, lastFailureAt: Date) {
        self.key = key
        self.failures = failures
        self.lastFailureAt = lastFailureAt
    }
}

/// One password check in progress under a throttle key (an account or an address), held in the
/// store while the check runs so parallel guesses cannot all start before the first is counted.
public struct ThrottleSlot: Sendable, Hashable {
    public var key: String
    /// Random, one per check.
    public var id: String

    public init(key: String, id: String) {
        self.key = key
        self.id = id
    }
}

/// What the holder of a new ``ThrottleSlot`` sees (``ThrottleStore/takeSlot(_:expiresAt:now:failuresKey:)``).
public struct ThrottleSlotView: Sendable, Equatable {
    /// The live slots under the key, the new one included.
    public var liveSlots: Int
    /// The failures counted under the limit's key, if any (whatever their age).
    public var failures: ThrottleRecord?

    public init(liveSlots: Int, failures: ThrottleRecord?) {
        self.liveSlots = liveSlots
        self.failures = failures
    }
}

/// The recent uses of one budget (such as an account's SMS sends), for a sliding-window limit.
///
/// Changed only by compare-and-swap on ``version``, so concurrent takers never overspend.
public struct LimitRecord: Sendable, Equatable, Codable {
    public var key: String
    /// When each use still inside the window happened, oldest first.
    public var uses: [Date]
    /// Incremented by every change.
    public var version: Int
    /// When the newest use leaves the window (the record may be removed then).
    public var expiresAt: Date

    public init(key: String, uses: [Date], version: Int, expiresAt: Date) {
        self.key = key
        self.uses = uses
        self.version = version
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case key, uses, version
        case expiresAt = "expires_at"
    }
}

/// A pushed authorization request (RFC 9126): the parameters a client sent to `/par`,
/// found by the SHA-256 of its `request_uri` and used once.
public struct PushedRequestRecord: Sendable, Equatable, Codable {
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

    enum CodingKeys: String, CodingKey {
        case parameters, signed
        case uriHash = "uri_hash"
        case clientID = "client_id"
        case expiresAt = "expires_at"
    }
}
