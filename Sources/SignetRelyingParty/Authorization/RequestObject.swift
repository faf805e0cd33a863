// Signing the authorization request on the backend — JWT-Secured Authorization Requests, RFC 9101.
import Crypto
import Foundation
import JWTKit
import SignetCore
import SignetJOSE

/// The claims of a request object: the request's parameters, and who signed it for whom, when.
struct RequestObjectClaims: JWTPayload {
    var parameters: [(name: String, value: String)]
    var iss: String
    var aud: String
    var exp: Int
    var nbf: Int
    var iat: Int
    var jti: String

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in parameters {
            // max_age is a number in a request object (OIDC Core §6.1); the rest are strings.
            if name == OAuthParameter.maxAge, let number = Int(value) {
                try container.encode(number, forKey: Key(stringValue: name))
            } else {
                try container.encode(value, forKey: Key(stringValue: name))
            }
        }
        try container.encode(iss, forKey: Key(stringValue: "iss"))
        try container.encode(aud, forKey: Key(stringValue: "aud"))
        try container.encode(exp, forKey: Key(stringValue: "exp"))
        try container.encode(nbf, forKey: Key(stringValue: "nbf"))
        try container.encode(iat, forKey: Key(stringValue: "iat"))
        try container.encode(jti, forKey: Key(stringValue: "jti"))
    }

    init(parameters: [(name: String, value: String)], iss: String, aud: String, exp: Int, nbf: Int, iat: Int, jti: String) {
        self.parameters = parameters
        self.iss = iss
        self.aud = aud
        self.exp = exp
        self.nbf = nbf
        self.iat = iat
        self.jti = jti
    }

    init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "request objects are only written here"))
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension RelyingParty {
    /// The request's parameters as a request object signed with the client's private_key_jwt key
    /// — RFC 9101 §4: `typ` `oauth-authz-req+jwt`, `iss` the client, `aud` the issuer, valid for
    /// five minutes from now (`nbf`, `exp`), a fresh `jti`.
    ///
    /// - Throws: `invalid_configuration` unless the client authenticates with private_key_jwt.
    func makeRequestObject(_ parameters: FormParameters) async throws -> String {
        guard case .privateKeyJWT(let privateKey, let keyID) = configuration.clientAuthentication else {
            throw SignetError(.invalidConfiguration, "signed request objects need a private_key_jwt client key")
        }
        let now = nowSeconds
        let claims = RequestObjectClaims(
            parameters: parameters.pairs.map { ($0.name, $0.value) }, iss: configuration.clientID, aud: configuration.issuer,
            exp: now + 300, nbf: now, iat: now, jti: random.token())
        return try await Self.signES256(claims, privateKey: privateKey, keyID: keyID, typ: "oauth-authz-req+jwt", what: "the request object")
    }
}
