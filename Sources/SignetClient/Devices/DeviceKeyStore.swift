// Where the installation's device key and its certificate chain live.
import Crypto
import Foundation
import X509

/// The installation's P-256 device key, as swift-certificates signs with it.
///
/// The device certificate (``DeviceCredential``) names this key; the key signs the CSR that asks
/// for it, and the TLS handshake that presents it. A key in hardware (the Secure Enclave) never
/// leaves it; a software key (``SoftwareDeviceKey``) can be handed to a TLS stack as PEM.
public protocol DeviceKey: Sendable {
    /// The key for swift-certificates: signs the PKCS#10 request (``DeviceCSR``).
    var privateKey: Certificate.PrivateKey { get }
}

/// Keeps the installation's device key and the certificate chain issued for it.
///
/// A key is made by ``makeKey()`` but kept only by ``save(_:certificateChain:)``, with the chain
/// the provider issued for it: so a reactivation can make its new key while the old one still
/// presents the old certificate, and replace both only when the provider has answered.
/// Implementations replace key and chain together (a crash leaves the old pair or the new, never
/// a mix) and must be safe to call from several tasks.
///
/// ``SecureEnclaveDeviceKeyStore`` on Apple platforms; ``SoftwareDeviceKeyStore`` (encrypted
/// file) on Linux and in command-line tools; ``MemoryDeviceKeyStore`` in tests.
public protocol DeviceKeyStore: Sendable {
    /// A new P-256 key, not yet kept.
    func makeKey() async throws -> any DeviceKey

    /// The kept key and chain, or `nil` when there is none (the device is not activated).
    ///
    /// - Throws: ``SignetClientError/Code/deviceKeyUnavailable`` when they are there but cannot be read.
    func load() async throws -> DeviceCredential?

    /// Keeps `key` (made by this store's ``makeKey()``) with `certificateChain` (PEM, leaf first),
    /// replacing the key and chain kept before.
    func save(_ key: any DeviceKey, certificateChain: [String]) async throws

    /// Deletes the kept key and chain; nothing kept is not an error.
    func delete() async throws
}

/// A P-256 device key in memory (``SoftwareDeviceKeyStore``, ``MemoryDeviceKeyStore``).
///
/// Prints as `****`: the key is a secret.
public struct SoftwareDeviceKey: DeviceKey, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The CryptoKit (swift-crypto) key.
    public let key: P256.Signing.PrivateKey

    /// A fresh key, or `key`.
    public init(key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) { self.key = key }

    public var privateKey: Certificate.PrivateKey { Certificate.PrivateKey(key) }

    /// The private key as PKCS#8 PEM, for a TLS stack that needs the key itself (SwiftNIO).
    public var pemRepresentation: String { key.pemRepresentation }

    public var description: String { "SoftwareDeviceKey(****)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["key": "****"]) }
}
