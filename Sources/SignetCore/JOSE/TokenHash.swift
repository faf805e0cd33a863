// at_hash and c_hash (OIDC Core §3.1.3.6, §3.3.2.11).
import Crypto
import Foundation

/// Left-most half of the hash of a token, base64url — the at_hash construction.
public enum TokenHash {
    /// at_hash for a token signed with ES256 / RS256 / PS256 (SHA-256).
    public static func sha256Half(of token: String) -> String {
        // Over the text's own bytes: no copy of the token (an access token is most of a kilobyte).
        var token = token
        return token.withUTF8 { text in
            SHA256.hash(data: UnsafeRawBufferPointer(text)).withUnsafeBytes { digest in
                Base64URL.encode(UnsafeRawBufferPointer(rebasing: digest.prefix(16)))
            }
        }
    }

    /// at_hash of `token` for a JWS signed with `algorithm` — OIDC Core §3.1.3.6: the hash of the
    /// signing algorithm, SHA-256 for ES256, RS256 and PS256, SHA-384 for ES384, SHA-512 for
    /// EdDSA over Ed25519.
    public static func half(of token: String, algorithm: String) -> String {
        switch algorithm {
        case "ES384": Data(Array(SHA384.hash(data: Data(token.utf8))).prefix(24)).base64URLEncodedString()
        case "EdDSA": Data(Array(SHA512.hash(data: Data(token.utf8))).prefix(32)).base64URLEncodedString()
        default: sha256Half(of: token)
        }
    }
}
