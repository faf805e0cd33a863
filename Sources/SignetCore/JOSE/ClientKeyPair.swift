// A client's private_key_jwt key pair: made, loaded (JWK or PEM), and published as a JWKS.
import Crypto
import Foundation

/// A P-256 key pair for a client's private_key_jwt, with its JWKs.
public struct ClientKeyPair: Sendable {
    public let privateKey: P256.Signing.PrivateKey
    public let keyID: String

    public init(privateKey: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), keyID: String? = nil) {
        self.privateKey = privateKey
        let jwk = PublicJWK(p256: privateKey.publicKey, kid: "")
        self.keyID = keyID ?? JWKThumbprint.sha256(of: ["kty": "EC", "crv": "P-256", "x": jwk.x ?? "", "y": jwk.y ?? ""]) ?? ""
    }

    /// The public JWKS to register with the provider.
    public var publicJWKS: String {
        let data = (try? JSONEncoder().encode(PublicJWKS(keys: [PublicJWK(p256: privateKey.publicKey, kid: keyID)]))) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The private JWK (RFC 7518 §6.2.2), for the client's own safekeeping.
    public var privateJWK: [String: String] {
        let jwk = PublicJWK(p256: privateKey.publicKey, kid: keyID)
        return [
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": keyID, "x": jwk.x ?? "", "y": jwk.y ?? "",
            "d": privateKey.rawRepresentation.base64URLEncodedString(),
        ]
    }

    /// Reads a PEM (PKCS#8 or SEC 1) P-256 private key; the key id is its JWK thumbprint.
    public init(pem: String) throws {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else { throw SignetError(.keyFailure, "not a P-256 private key in PEM") }
        self.init(privateKey: key)
    }

    /// Reads a private JWK written by ``privateJWK``.
    public init(privateJWK: [String: String]) throws {
        guard privateJWK["kty"] == "EC", privateJWK["crv"] == "P-256", let d = privateJWK["d"].flatMap(Data.init(base64URLEncoded:)),
            let key = try? P256.Signing.PrivateKey(rawRepresentation: d)
        else { throw SignetError(.keyFailure, "not a P-256 private JWK") }
        self.init(privateKey: key, keyID: privateJWK["kid"])
    }
}
