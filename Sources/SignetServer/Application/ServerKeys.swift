// The symmetric keys the provider makes for itself and shares between instances through the store.
import Crypto
import Foundation
import SignetCore
import SignetStore

/// The HMAC keys of one-time codes, anti-CSRF tokens and UAF `serverData`: random on first start,
/// stored as named secrets (``SecretStore``), so every instance on one database holds the same.
struct ServerKeys: Sendable {
    /// One-time codes are hashed with it (HMAC-SHA256).
    let otp: SymmetricKey
    /// Derived anti-CSRF tokens and DPoP nonces are made with it (HMAC-SHA256).
    let csrf: SymmetricKey

    /// The keys stored in `secrets`, made now when there are none yet.
    static func load(from secrets: any SecretStore, random: SecureRandom) async throws -> ServerKeys {
        let otp = try await secrets.secret(named: "otp-hmac-key", orStore: random.token())
        let csrf = try await secrets.secret(named: "csrf-hmac-key", orStore: random.token())
        return ServerKeys(otp: SymmetricKey(data: Data(otp.utf8)), csrf: SymmetricKey(data: Data(csrf.utf8)))
    }

    /// The key UAF serverData is authenticated with: derived from the OTP key (HKDF, its own
    /// label), so every instance holds it without another secret to distribute.
    var uaf: SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: otp, info: Data("signet-uaf-server-data".utf8), outputByteCount: 32)
    }

    /// An anti-CSRF token for `purpose` bound to a browser value: HMAC-SHA256 under the CSRF key,
    /// so nobody who lacks the key can compute a page's token from the cookie alone.
    func csrfToken(_ purpose: String, binding: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("\(purpose):\(binding)".utf8), using: csrf)).base64URLEncodedString()
    }
}

/// SHA-256 as lower-case hex: how codes, tokens, session ids and secrets are stored.
public enum SecretDigest {
    public static func hex(_ value: String) -> String {
        SHA256.hash(data: Data(value.utf8)).hexEncodedString()
    }
}
