// Authenticators with software keys: in a sealed file (Linux, command-line tools) or in memory (tests).
import Crypto
import Foundation
import SignetCore

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

    /// A software key: for PIN authenticators only, since nothing here verifies a fingerprint or
    /// face (a software key claiming a biometric AAID would claim what it cannot do).
    public func makeKey(aaid: String, der: Bool, options: AuthenticatorOptions) throws -> (signer: any UAFSigner, keyMaterial: Data) {
        guard AuthenticatorCatalog.kind(aaid)?.verification == .pin else {
            throw SignetClientError(
                .misuse, isRetryable: false, reason: "software keys serve PIN authenticators only; \(aaid) needs the OS's user verification")
        }
        let signer = SoftwareUAFSigner(der: der)
        return (signer, signer.key.rawRepresentation)
    }

    public func signer(for authenticator: StoredAuthenticator, reason: String) throws -> any UAFSigner {
        try SoftwareUAFSigner.restore(authenticator)
    }

    public func advanceCounter(keyID: String) throws -> StoredAuthenticator {
        guard var authenticator = try all().first(where: { $0.keyID == keyID }) else { throw StoredAuthenticator.notKept(keyID) }
        authenticator.signCounter &+= 1
        try save(authenticator)
        return authenticator
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
    public func advanceCounter(keyID: String) throws -> StoredAuthenticator {
        guard let index = kept.firstIndex(where: { $0.keyID == keyID }) else { throw StoredAuthenticator.notKept(keyID) }
        kept[index].signCounter &+= 1
        return kept[index]
    }

    /// Plays the OS wiping the key (lock screen removed, new biometrics enrolled).
    public func invalidate(keyID: String) { invalidated.insert(keyID) }
}

extension SoftwareUAFSigner {
    /// The signer of a kept software authenticator.
    static func restore(_ authenticator: StoredAuthenticator) throws -> SoftwareUAFSigner {
        do { return SoftwareUAFSigner(key: try P256.Signing.PrivateKey(rawRepresentation: authenticator.keyMaterial), der: authenticator.der) } catch
        {
            throw SignetClientError(
                .authenticatorInvalidated, isRetryable: false, reason: "the authenticator's key cannot be read", underlying: error)
        }
    }
}
