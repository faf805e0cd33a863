// Authenticators with software keys: in a sealed file (Linux, command-line tools) or in memory (tests).
import Crypto
import Foundation

/// Software UAuth keys and the authenticators' records in one file sealed with AES-GCM under a
/// key the caller holds (``SealedFile``), like ``SoftwareDeviceKeyStore``.
///
/// The user is verified by the app (the PIN, proved to the provider too); there is no OS
/// biometric here, so only PIN authenticators make sense with this store.
public actor SoftwareAuthenticatorKeyStore: AuthenticatorKeyStore {
    private let sealed: SealedFile
    private var cached: [StoredAuthenticator]?

    public static let fileName = "authenticators.sealed"

    /// - Parameters:
    ///   - directory: the folder for the file; made (mode 0700) when missing.
    ///   - encryptionKey: the AES key the file is sealed with.
    public init(directory: URL, encryptionKey: SymmetricKey) {
        sealed = SealedFile(
            directory: directory, fileName: Self.fileName, magic: Array("SGAU".utf8) + [1], checkLabel: Data("signet authenticators check v1".utf8),
            key: encryptionKey, noun: "authenticator", code: .deviceKeyUnavailable)
    }

    public func makeKey(aaid: String, der: Bool, options: AuthenticatorOptions) -> (signer: any UAFSigner, keyMaterial: Data) {
        let signer = SoftwareUAFSigner(der: der)
        return (signer, signer.key.rawRepresentation)
    }

    public func signer(for authenticator: StoredAuthenticator, reason: String) throws -> any UAFSigner {
        try SoftwareUAFSigner.restore(authenticator)
    }

    public func all() throws -> [StoredAuthenticator] {
        if let cached { return cached }
        let read = try sealed.read([StoredAuthenticator].self) ?? []
        cached = read
        return read
    }

    public func save(_ authenticator: StoredAuthenticator) throws {
        var list = try all().filter { $0.keyID != authenticator.keyID }
        list.append(authenticator)
        try sealed.write(list)
        cached = list
    }

    public func delete(keyID: String) throws {
        let list = try all().filter { $0.keyID != keyID }
        try sealed.write(list)
        cached = list
    }
}

/// Authenticators in memory, for tests; ``invalidate(keyID:)`` plays the OS wiping a key.
public actor MemoryAuthenticatorKeyStore: AuthenticatorKeyStore {
    private var kept: [StoredAuthenticator] = []
    private var invalidated: Set<String> = []

    public init() {}

    public func makeKey(aaid: String, der: Bool, options: AuthenticatorOptions) -> (signer: any UAFSigner, keyMaterial: Data) {
        let signer = SoftwareUAFSigner(der: der)
        return (signer, signer.key.rawRepresentation)
    }

    public func signer(for authenticator: StoredAuthenticator, reason: String) throws -> any UAFSigner {
        guard !invalidated.contains(authenticator.keyID) else {
            throw SignetClientError(.authenticatorInvalidated, isRetryable: false, reason: "the OS invalidated the authenticator's key")
        }
        return try SoftwareUAFSigner.restore(authenticator)
    }

    public func all() -> [StoredAuthenticator] { kept }
    public func save(_ authenticator: StoredAuthenticator) {
        kept.removeAll { $0.keyID == authenticator.keyID }
        kept.append(authenticator)
    }
    public func delete(keyID: String) { kept.removeAll { $0.keyID == keyID } }

    /// Plays the OS wiping the key (lock screen removed, new biometrics enrolled).
    public func invalidate(keyID: String) { invalidated.insert(keyID) }
}

extension SoftwareUAFSigner {
    /// The signer of a kept software authenticator.
    static func restore(_ authenticator: StoredAuthenticator) throws -> SoftwareUAFSigner {
        do { return SoftwareUAFSigner(key: try P256.Signing.PrivateKey(rawRepresentation: authenticator.keyMaterial), der: authenticator.der) } catch {
            throw SignetClientError(.authenticatorInvalidated, isRetryable: false, reason: "the authenticator's key cannot be read", underlying: error)
        }
    }
}
