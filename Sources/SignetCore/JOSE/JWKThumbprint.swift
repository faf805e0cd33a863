// JWK thumbprints — RFC 7638.
import Crypto
import Foundation

/// The SHA-256 thumbprint of a public JWK: its required members (RFC 7638 §3.2), in
/// lexicographic order, as JSON without white space, hashed and base64url-encoded.
///
/// Hand-written: the input is a JWK as decoded JSON (from a DPoP proof's header), which
/// jwt-kit's key types do not expose.
public enum JWKThumbprint {
    /// The required members per key type (RFC 7638 §3.2, RFC 8037 §2 for OKP).
    static let requiredMembers: [String: [String]] = ["EC": ["crv", "kty", "x", "y"], "RSA": ["e", "kty", "n"], "OKP": ["crv", "kty", "x"]]

    /// The thumbprint, or `nil` when `jwk` lacks a required member or has an unknown `kty`.
    public static func sha256(of jwk: [String: Any]) -> String? {
        guard let kty = jwk["kty"] as? String, let names = requiredMembers[kty] else { return nil }
        var members: [String] = []
        for name in names {
            guard let value = jwk[name] as? String, value.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else { return nil }
            // Values are base64url or registered names, so no JSON escaping is needed.
            members.append("\"\(name)\":\"\(value)\"")
        }
        let canonical = "{" + members.joined(separator: ",") + "}"
        return Data(SHA256.hash(data: Data(canonical.utf8))).base64URLEncodedString()
    }
}
