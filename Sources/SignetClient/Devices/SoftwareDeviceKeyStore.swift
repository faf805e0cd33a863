// The device key and its chain in one file, sealed with AES-GCM under the caller's key.
import Crypto
import Foundation

/// Keeps a software P-256 device key and its certificate chain in a file only its owner can
/// read, encrypted with AES-GCM under a key the caller holds (Linux, command-line tools, tests).
///
/// On Apple platforms prefer ``SecureEnclaveDeviceKeyStore``, whose key cannot be copied. Here
/// the key is as safe as `encryptionKey`: keep that in the platform's secret store, not beside
/// the file.
///
/// The file (`device-credential.sealed`, mode 0600) holds a header, a 16-byte check value
/// (HMAC-SHA256 of a fixed label under `encryptionKey`, so a wrong key is told apart from an
/// altered file) and an AES-GCM box, authenticated with the header, of the raw key and the chain.
/// Key and chain share one file so replacing them is one atomic rename: a crash between two
/// writes can never pair a key with another key's certificate.
public actor SoftwareDeviceKeyStore: DeviceKeyStore {
    /// The folder the file lives in.
    public let directory: URL
    private let sealed: SealedFile
    private var cached: DeviceCredential?

    /// The file's name in ``directory``.
    public static let fileName = "device-credential.sealed"

    /// - Parameters:
    ///   - directory: the folder for the file; made (mode 0700) when missing.
    ///   - encryptionKey: the AES key (128, 192 or 256 bits) the file is sealed with.
    public init(directory: URL, encryptionKey: SymmetricKey) {
        self.directory = directory
        self.sealed = SealedFile(
            directory: directory, fileName: Self.fileName, magic: Array("SGDK".utf8) + [1], checkLabel: Data("signet device key check v1".utf8),
            key: encryptionKey, noun: "device key", code: .deviceKeyUnavailable)
    }

    /// The file's location.
    public var file: URL { sealed.file }

    public func makeKey() -> any DeviceKey { SoftwareDeviceKey() }

    public func load() throws -> DeviceCredential? {
        if let cached { return cached }
        guard let contents = try sealed.read(Contents.self) else { return nil }
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(rawRepresentation: contents.key) } catch {
            throw SignetClientError(
                .deviceKeyUnavailable, isRetryable: false, reason: "the device key file does not hold a P-256 key", underlying: error)
        }
        let credential = try DeviceCredential(key: SoftwareDeviceKey(key: key), certificateChain: contents.certificateChain)
        cached = credential
        return credential
    }

    public func save(_ key: any DeviceKey, certificateChain: [String]) throws {
        guard let software = key as? SoftwareDeviceKey else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "the key was not made by a SoftwareDeviceKeyStore")
        }
        let credential = try DeviceCredential(key: software, certificateChain: certificateChain)
        try sealed.write(Contents(key: software.key.rawRepresentation, certificateChain: certificateChain))
        cached = credential
    }

    public func delete() throws {
        cached = nil
        try sealed.delete()
    }

    struct Contents: Codable {
        var key: Data
        var certificateChain: [String]

        enum CodingKeys: String, CodingKey {
            case key
            case certificateChain = "certificate_chain"
        }
    }
}
