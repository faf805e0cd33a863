// The JWT claim sets Signet issues and accepts.
import Foundation

/// The claims of an ID token — OIDC Core §2.
///
/// Plain `Codable`, so an app can read one without jwt-kit; the server and the relying-party
/// kit verify signatures through `SignetJOSE`, and claim checks are done by the caller with
/// an explicit clock.
public struct IDTokenClaims: Codable, Sendable, Equatable {
    public var iss: String
    public var sub: String
    public var aud: [String]
    public var azp: String?
    public var exp: Int
    public var iat: Int
    public var authTime: Int?
    public var nonce: String?
    public var acr: String?
    public var amr: [String]?
    /// at_hash — OIDC Core §3.1.3.6
    public var atHash: String?
    /// sid — OIDC Front-Channel Logout §3
    public var sid: String?
    public var name: String?
    public var preferredUsername: String?
    public var email: String?
    public var phoneNumber: String?
    /// instance_id — the app installation a login with scope `device` activates (Signet, issue 8).
    public var instanceID: String?

    public init(
        iss: String, sub: String, aud: [String], azp: String?, exp: Int, iat: Int, authTime: Int?, nonce: String?, acr: String?, amr: [String]?,
        atHash: String?, sid: String? = nil
    ) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.azp = azp
        self.exp = exp
        self.iat = iat
        self.authTime = authTime
        self.nonce = nonce
        self.acr = acr
        self.amr = amr
        self.atHash = atHash
        self.sid = sid
    }

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, azp, exp, iat, nonce, acr, amr, sid, name, email
        case authTime = "auth_time"
        case atHash = "at_hash"
        case preferredUsername = "preferred_username"
        case phoneNumber = "phone_number"
        case instanceID = "instance_id"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        // aud — OIDC Core §2: a string or an array of strings.
        if let single = try? container.decode(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decode([String].self, forKey: .aud)
        }
        azp = try container.decodeIfPresent(String.self, forKey: .azp)
        exp = try container.decode(Int.self, forKey: .exp)
        iat = try container.decode(Int.self, forKey: .iat)
        authTime = try container.decodeIfPresent(Int.self, forKey: .authTime)
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        acr = try container.decodeIfPresent(String.self, forKey: .acr)
        amr = try container.decodeIfPresent([String].self, forKey: .amr)
        atHash = try container.decodeIfPresent(String.self, forKey: .atHash)
        sid = try container.decodeIfPresent(String.self, forKey: .sid)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        preferredUsername = try container.decodeIfPresent(String.self, forKey: .preferredUsername)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        phoneNumber = try container.decodeIfPresent(String.self, forKey: .phoneNumber)
        instanceID = try container.decodeIfPresent(String.self, forKey: .instanceID)
    }
}

/// The claims of a JWT access token — RFC 9068 §2.2.
public struct AccessTokenClaims: Codable, Sendable, Equatable {
    public var iss: String
    public var sub: String
    /// aud — RFC 9068 §3: the resources the token is for (RFC 8707), and the issuer when it
    /// may be used at its UserInfo endpoint. One value is written as a string.
    public var aud: [String]
    public var clientID: String
    public var exp: Int
    public var iat: Int
    public var jti: String
    public var scope: String
    public var authTime: Int?
    public var acr: String?
    public var amr: [String]?
    /// The authorization grant this token descends from; revoking the grant revokes the token.
    public var grantID: String
    /// cnf — RFC 7800 §3.1; with `jkt` (RFC 9449 §6.1) the token is bound to that DPoP key.
    public var cnf: Confirmation?
    /// attestation — Signet: what vouched for the device key of a certificate-bound token
    /// (`none` with the development verifier; docs/devices.md).
    public var attestation: String?

    public init(
        iss: String, sub: String, aud: [String], clientID: String, exp: Int, iat: Int, jti: String, scope: String, authTime: Int?, acr: String?,
        amr: [String]?, grantID: String
    ) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.clientID = clientID
        self.exp = exp
        self.iat = iat
        self.jti = jti
        self.scope = scope
        self.authTime = authTime
        self.acr = acr
        self.amr = amr
        self.grantID = grantID
    }

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, jti, scope, acr, amr, cnf, attestation
        case clientID = "client_id"
        case authTime = "auth_time"
        case grantID = "grant_id"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        if let single = try? container.decode(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decode([String].self, forKey: .aud)
        }
        clientID = try container.decode(String.self, forKey: .clientID)
        exp = try container.decode(Int.self, forKey: .exp)
        iat = try container.decode(Int.self, forKey: .iat)
        jti = try container.decode(String.self, forKey: .jti)
        scope = try container.decode(String.self, forKey: .scope)
        authTime = try container.decodeIfPresent(Int.self, forKey: .authTime)
        acr = try container.decodeIfPresent(String.self, forKey: .acr)
        amr = try container.decodeIfPresent([String].self, forKey: .amr)
        grantID = try container.decode(String.self, forKey: .grantID)
        cnf = try container.decodeIfPresent(Confirmation.self, forKey: .cnf)
        attestation = try container.decodeIfPresent(String.self, forKey: .attestation)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(sub, forKey: .sub)
        if aud.count == 1 { try container.encode(aud[0], forKey: .aud) } else { try container.encode(aud, forKey: .aud) }
        try container.encode(clientID, forKey: .clientID)
        try container.encode(exp, forKey: .exp)
        try container.encode(iat, forKey: .iat)
        try container.encode(jti, forKey: .jti)
        try container.encode(scope, forKey: .scope)
        try container.encodeIfPresent(authTime, forKey: .authTime)
        try container.encodeIfPresent(acr, forKey: .acr)
        try container.encodeIfPresent(amr, forKey: .amr)
        try container.encode(grantID, forKey: .grantID)
        try container.encodeIfPresent(cnf, forKey: .cnf)
        try container.encodeIfPresent(attestation, forKey: .attestation)
    }
}

/// The claims of a client assertion — RFC 7523 §3.
///
/// `aud` is one JSON string: the provider's issuer identifier (or, still accepted by Signet,
/// its token endpoint URL). An array is not decodable here, even one holding only the issuer:
/// the audience-injection fix of RFC 7523bis (2025), which stops an assertion made for one
/// server from naming others that would accept it too.
public struct ClientAssertionClaims: Codable, Sendable, Equatable {
    public var iss: String
    public var sub: String
    /// aud — RFC 7523 §3 item 3, a single string.
    public var aud: String
    public var exp: Int
    public var iat: Int?
    public var nbf: Int?
    public var jti: String

    public init(iss: String, sub: String, aud: String, exp: Int, iat: Int?, nbf: Int? = nil, jti: String) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.exp = exp
        self.iat = iat
        self.nbf = nbf
        self.jti = jti
    }

    enum CodingKeys: String, CodingKey { case iss, sub, aud, exp, iat, nbf, jti }
}

extension IDTokenClaims {
    /// The claims of a compact JWS read *without* checking its signature: only for an ID token
    /// received directly from the token endpoint over TLS (OIDC Core §3.1.3.7 item 6).
    public static func unverified(_ token: String) -> IDTokenClaims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Data(base64URLEncoded: String(parts[1])) else { return nil }
        return try? JSONDecoder().decode(IDTokenClaims.self, from: payload)
    }
}

extension AccessTokenClaims {
    /// The claims of a JWT access token read *without* checking its signature: only for a token
    /// received directly from the token endpoint over TLS, to show or compare what it says.
    public static func unverified(_ token: String) -> AccessTokenClaims? {
        guard case .success(let jwt) = CompactJWT.parse(token) else { return nil }
        return try? JSONDecoder().decode(AccessTokenClaims.self, from: jwt.claims)
    }
}

/// cnf — RFC 7800 §3.1: the key a token is bound to.
public struct Confirmation: Codable, Sendable, Equatable {
    /// jkt — RFC 9449 §6.1: the SHA-256 JWK thumbprint (RFC 7638) of the DPoP key.
    public var jkt: String?
    /// x5t#S256 — RFC 8705 §3.1: the SHA-256 thumbprint (base64url) of the client certificate's DER.
    public var x5tS256: String?

    public init(jkt: String? = nil, x5tS256: String? = nil) {
        self.jkt = jkt
        self.x5tS256 = x5tS256
    }

    enum CodingKeys: String, CodingKey {
        case jkt
        case x5tS256 = "x5t#S256"
    }
}

// Written member by member on the token endpoint (``JSONObjectWritable``); the same members, in
// the same cases, as the `Codable` conformances above.

extension IDTokenClaims: JSONObjectWritable {
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("iss", iss)
        object.member("sub", sub)
        object.member("aud", aud)
        object.member("azp", azp)
        object.member("exp", exp)
        object.member("iat", iat)
        object.member("auth_time", authTime)
        object.member("nonce", nonce)
        object.member("acr", acr)
        object.member("amr", amr)
        object.member("at_hash", atHash)
        object.member("sid", sid)
        object.member("name", name)
        object.member("preferred_username", preferredUsername)
        object.member("email", email)
        object.member("phone_number", phoneNumber)
        object.member("instance_id", instanceID)
    }
}

extension AccessTokenClaims: JSONObjectWritable {
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("iss", iss)
        object.member("sub", sub)
        if aud.count == 1 { object.member("aud", aud[0]) } else { object.member("aud", aud) }
        object.member("client_id", clientID)
        object.member("exp", exp)
        object.member("iat", iat)
        object.member("jti", jti)
        object.member("scope", scope)
        object.member("auth_time", authTime)
        object.member("acr", acr)
        object.member("amr", amr)
        object.member("grant_id", grantID)
        object.member("cnf", cnf)
        object.member("attestation", attestation)
    }
}

extension Confirmation: JSONObjectWritable {
    public func writeJSON(into object: inout JSONObjectWriter) {
        object.member("jkt", jkt)
        object.member("x5t#S256", x5tS256)
    }
}

extension ClientAssertionClaims: JSONObjectReadable {
    /// Read on every token request with private_key_jwt; the same members as the `Codable`
    /// conformance (``JSONObjectReadable``).
    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        iss = try members.string("iss")
        sub = try members.string("sub")
        aud = try members.string("aud")
        exp = try members.int("exp")
        iat = try members.intIfPresent("iat")
        nbf = try members.intIfPresent("nbf")
        jti = try members.string("jti")
    }
}
