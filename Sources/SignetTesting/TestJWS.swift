// Hand-built compact JWS for hostile-input tests: the malformed variants a JOSE library refuses to make.
import Crypto
import Foundation
import SignetCore
import SignetServer

/// Builds client assertions and other JWS, correct or deliberately wrong.
///
/// Written by hand (rather than with jwt-kit) because the tests need tokens no
/// library would produce: `alg: none`, HS256 keyed with a public key, wrong `kid`s.
public enum TestJWS {
    /// Signs `claims` with ES256 under `header` (which should name `alg` and `kid`).
    public static func es256(header: [String: Any], claims: [String: Any], key: P256.Signing.PrivateKey) throws -> String {
        let input = try signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + signature.rawRepresentation.base64URLEncodedString()
    }

    /// Signs with HMAC-SHA256 using `secret` as the key.
    public static func hs256(header: [String: Any], claims: [String: Any], secret: Data) throws -> String {
        let input = try signingInput(header: header, claims: claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: secret))
        return input + "." + Data(mac).base64URLEncodedString()
    }

    /// An unsecured JWS (`alg: none`, empty signature).
    public static func unsecured(claims: [String: Any]) throws -> String {
        try signingInput(header: ["alg": "none", "typ": "JWT"], claims: claims) + "."
    }

    static func signingInput(header: [String: Any], claims: [String: Any]) throws -> String {
        let headerData = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let claimsData = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return headerData.base64URLEncodedString() + "." + claimsData.base64URLEncodedString()
    }

    /// The claims of a client assertion (RFC 7523 §3) for `clientID`, valid at `now` unless changed.
    public static func assertionClaims(clientID: String, audience: String, now: Date, lifetime: TimeInterval = 60, jti: String = UUID().uuidString)
        -> [String: Any]
    {
        let issuedAt = Int(now.timeIntervalSince1970)
        return ["iss": clientID, "sub": clientID, "aud": audience, "iat": issuedAt, "exp": issuedAt + Int(lifetime), "jti": jti]
    }

    /// A correct client assertion signed with the client's key.
    public static func clientAssertion(
        _ keyPair: ClientKeyPair, clientID: String, audience: String, now: Date, lifetime: TimeInterval = 60, jti: String = UUID().uuidString
    ) throws -> String {
        try es256(
            header: ["alg": "ES256", "kid": keyPair.keyID, "typ": "JWT"],
            claims: assertionClaims(clientID: clientID, audience: audience, now: now, lifetime: lifetime, jti: jti), key: keyPair.privateKey)
    }

    /// The token endpoint form fields carrying an assertion.
    public static func assertionFields(_ assertion: String) -> [(String, String)] {
        [("client_assertion_type", OAuthParameter.jwtBearerAssertionType), ("client_assertion", assertion)]
    }
}

extension TestJWS {
    /// The header and claims of an ES256 JWS whose signature verifies with a key of `jwks`; `nil` otherwise.
    public static func verifiedES256(_ token: String, jwks: PublicJWKS) -> (header: [String: Any], claims: [String: Any])? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Data(base64URLEncoded: parts[0]), let claimsData = Data(base64URLEncoded: parts[1]),
            let signatureData = Data(base64URLEncoded: parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any],
            header["alg"] as? String == "ES256", let kid = header["kid"] as? String,
            let key = jwks.keys.first(where: { $0.kid == kid })?.p256PublicKey,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return nil }
        return (header, claims)
    }
}

extension TestJWS {
    /// A JSON object written member by member, in order, so that a name can appear twice
    /// (which no dictionary, and so no JSON encoder, can produce). Values are encoded with
    /// `JSONSerialization`: strings, numbers, booleans, arrays and dictionaries.
    public static func object(_ members: [(String, Any)]) throws -> String {
        let encoded = try members.map { name, value in
            let nameJSON = try JSONSerialization.data(withJSONObject: name, options: [.fragmentsAllowed])
            let valueJSON = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
            return String(decoding: nameJSON, as: UTF8.self) + ":" + String(decoding: valueJSON, as: UTF8.self)
        }
        return "{" + encoded.joined(separator: ",") + "}"
    }

    /// Signs the exact JSON texts `headerJSON` and `claimsJSON` with ES256.
    public static func es256(headerJSON: String, claimsJSON: String, key: P256.Signing.PrivateKey) throws -> String {
        let input = Data(headerJSON.utf8).base64URLEncodedString() + "." + Data(claimsJSON.utf8).base64URLEncodedString()
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + signature.rawRepresentation.base64URLEncodedString()
    }
}
