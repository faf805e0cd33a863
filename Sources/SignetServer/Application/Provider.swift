// What every endpoint needs: settings, storage, keys, time and randomness.
import Crypto
import Foundation
import Logging
import SignetCore
import SignetStore
import Synchronization

/// The provider's shared dependencies, passed to every endpoint.
public struct Provider: Sendable {
    public let configuration: SignetConfiguration
    public let store: any SignetStore
    public let keys: KeyRing
    public let clock: SignetClock
    public let random: SecureRandom
    public let passwords: PasswordHasher
    public let logger: Logger
    /// Where SMS one-time codes go.
    public let messages: any MessageSender
    /// The key one-time codes are hashed with (HMAC-SHA256), shared by all instances through the store.
    let otpKey: SymmetricKey
    /// The key derived anti-CSRF tokens are made with (HMAC-SHA256), shared by all instances through the store.
    let csrfKey: SymmetricKey
    private let boundIssuer: BoundIssuer
    /// Requests, logins and tokens counted for `/metrics`.
    public let metrics: SignetMetrics
    /// The stored audit trail (``AuditTrail``).
    public var audit: AuditTrail { AuditTrail(store: store, clock: clock, random: random, logger: logger) }

    public init(
        configuration: SignetConfiguration, store: any SignetStore, keys: KeyRing, clock: SignetClock, random: SecureRandom, passwords: PasswordHasher,
        logger: Logger, messages: any MessageSender, otpKey: SymmetricKey, csrfKey: SymmetricKey, boundIssuer: BoundIssuer = BoundIssuer(),
        metrics: SignetMetrics = SignetMetrics()
    ) {
        // A programming error in an embedding application, caught at start rather than at the first
        // record written with such a date (the records' hand-written JSON takes finite numbers only).
        if let name = configuration.unstorableLifetime {
            preconditionFailure("SignetConfiguration.\(name) must be a finite number of seconds, at most a century")
        }
        self.configuration = configuration
        self.metrics = metrics
        self.messages = messages
        self.otpKey = otpKey
        self.csrfKey = csrfKey
        self.boundIssuer = boundIssuer
        self.store = store
        self.keys = keys
        self.clock = clock
        self.random = random
        self.passwords = passwords
        self.logger = logger
    }

    /// The issuer URL: the configured one, or the bound address when the configuration asks for that.
    public var issuer: String { boundIssuer.value ?? configuration.issuer }

    /// An endpoint URL under the issuer.
    public func endpoint(_ path: String) -> String { issuer + path }

    /// The current time.
    public func now() -> Date { clock.now() }

    /// Seconds since 1970 for JWT claims.
    public func epochSeconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970) }
}

extension Provider {
    /// An anti-CSRF token for `purpose` bound to a browser value: HMAC-SHA256 under the server's
    /// key, so nobody who lacks the key can compute a page's token from the cookie alone.
    func csrfToken(_ purpose: String, binding: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("\(purpose):\(binding)".utf8), using: csrfKey)).base64URLEncodedString()
    }

    /// The key UAF serverData is authenticated with: derived from the stored OTP key (HKDF, its
    /// own label), so every instance holds it without another secret to distribute.
    var uafKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: otpKey, info: Data("signet-uaf-server-data".utf8), outputByteCount: 32)
    }
}

/// SHA-256 as lower-case hex: how codes, tokens, session ids and secrets are stored.
public enum SecretDigest {
    public static func hex(_ value: String) -> String {
        SHA256.hash(data: Data(value.utf8)).hexEncodedString()
    }
}

/// The issuer learned once the server has bound its port, for servers started on port 0.
public final class BoundIssuer: Sendable {
    private let storage = Mutex<String?>(nil)
    public init() {}
    /// The issuer, once known.
    public var value: String? { storage.withLock { $0 } }
    func set(_ issuer: String) { storage.withLock { $0 = issuer } }
}
