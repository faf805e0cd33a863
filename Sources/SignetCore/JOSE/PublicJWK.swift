// Public keys as JSON Web Keys (RFC 7517, RFC 7518 §6.2).
import Crypto
import Foundation

/// A public JSON Web Key as published in a JWKS.
///
/// Only the members Signet publishes or reads; unknown members are ignored.
public struct PublicJWK: Sendable, Codable, Equatable {
    public var kty: String
    public var kid: String?
    public var use: String?
    public var alg: String?
    public var crv: String?
    public var x: String?
    public var y: String?
    public var n: String?
    public var e: String?

    public init(
        kty: String, kid: String?, use: String?, alg: String?, crv: String? = nil, x: String? = nil, y: String? = nil, n: String? = nil,
        e: String? = nil
    ) {
        self.kty = kty
        self.kid = kid
        self.use = use
        self.alg = alg
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }

    /// The JWK of a P-256 public key for ES256 signatures.
    public init(p256 key: P256.Signing.PublicKey, kid: String) {
        let raw = key.rawRepresentation  // x ‖ y, 32 bytes each
        self.init(
            kty: "EC", kid: kid, use: "sig", alg: "ES256", crv: "P-256",
            x: Data(raw.prefix(32)).base64URLEncodedString(), y: Data(raw.suffix(32)).base64URLEncodedString())
    }

    /// The P-256 key this JWK describes, or `nil` when it is not one.
    public var p256PublicKey: P256.Signing.PublicKey? {
        guard kty == "EC", crv == "P-256", let x, let y,
            let xData = Data(base64URLEncoded: x), let yData = Data(base64URLEncoded: y),
            xData.count == 32, yData.count == 32
        else { return nil }
        return try? P256.Signing.PublicKey(rawRepresentation: xData + yData)
    }
}

/// A JSON Web Key Set — RFC 7517 §5.
public struct PublicJWKS: Sendable, Codable, Equatable {
    public var keys: [PublicJWK]
    public init(keys: [PublicJWK]) { self.keys = keys }
}
