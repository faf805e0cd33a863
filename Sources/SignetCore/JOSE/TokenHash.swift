// at_hash and c_hash (OIDC Core §3.1.3.6, §3.3.2.11).
import Crypto
import Foundation

/// Left-most half of the hash of a token, base64url — the at_hash construction.
public enum TokenHash {
    /// at_hash for a token signed with ES256 / RS256 / PS256 (SHA-256).
    public static func sha256Half(of token: String) -> String {
        let digest = Array(SHA256.hash(data: Data(token.utf8)))
        return Data(digest.prefix(16)).base64URLEncodedString()
    }
}
