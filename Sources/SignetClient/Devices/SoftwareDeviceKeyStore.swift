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
    private let encryptionKey: SymmetricKey
    private var cached: DeviceCredential?

    /// The file's name in ``directory``.
    public static let fileName = "device-credential.sealed"
    private static let magic = Array("SGDK".utf8) + [1]
    private static let checkLabel = Data("signet device key check v1".utf8)

    /// - Parameters:
    ///   - directory: the folder for the file; made (mode 0700) when missing.
    ///   - encryptionKey: the AES key (128, 192 or 256 bits) the file is sealed with.
    public init(directory: URL, encryptionKey: SymmetricKey) {
        self.directory = directory
        self.encryptionKey = encryptionKey
    }

    /// The file's location.
    public var file: URL { directory.appendingPathComponent(Self.fileName) }

    public func makeKey() -> any DeviceKey { SoftwareDeviceKey() }

    public func load() throws -> DeviceCredential? {
        if let cached { return cached }
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        let credential = try open(data)
        cached = credential
        return credential
    }

    public func save(_ key: any DeviceKey, certificateChain: [String]) throws {
        guard let software = key as? SoftwareDeviceKey else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "the key was not made by a SoftwareDeviceKeyStore")
        }
        let credential = try DeviceCredential(key: software, certificateChain: certificateChain)
        try write(try seal(Contents(key: software.key.rawRepresentation, certificateChain: certificateChain)))
        cached = credential
    }

    public func delete() throws {
        cached = nil
        do { try FileManager.default.removeItem(at: file) } catch  where !FileManager.default.fileExists(atPath: file.path) {
            return
        } catch {
            throw Self.failure("the device key file could not be deleted", error)
        }
    }

    // MARK: the file

    struct Contents: Codable {
        var key: Data
        var certificateChain: [String]

        enum CodingKeys: String, CodingKey {
            case key
            case certificateChain = "certificate_chain"
        }
    }

    private var header: [UInt8] { Self.magic + Array(HMAC<SHA256>.authenticationCode(for: Self.checkLabel, using: encryptionKey).prefix(16)) }

    private func seal(_ contents: Contents) throws -> Data {
        let header = self.header
        do {
            let box = try AES.GCM.seal(try JSONEncoder().encode(contents), using: encryptionKey, authenticating: header)
            guard let combined = box.combined else { throw Self.failure("AES-GCM gave no combined box", nil) }
            return Data(header) + combined
        } catch let error as SignetClientError { throw error } catch {
            throw Self.failure("the device key could not be sealed", error)
        }
    }

    private func open(_ data: Data) throws -> DeviceCredential {
        let header = self.header
        guard data.count > header.count, Array(data.prefix(Self.magic.count)) == Self.magic else {
            throw Self.failure("\(Self.fileName) is not a Signet device key file", nil)
        }
        guard Array(data.prefix(header.count)) == header else {
            throw Self.failure("the encryption key is not the one the device key was sealed with", nil)
        }
        let contents: Contents
        do {
            let box = try AES.GCM.SealedBox(combined: data.dropFirst(header.count))
            contents = try JSONDecoder().decode(Contents.self, from: try AES.GCM.open(box, using: encryptionKey, authenticating: header))
        } catch {
            throw Self.failure("the device key file was altered", error)
        }
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(rawRepresentation: contents.key) } catch {
            throw Self.failure("the device key file does not hold a P-256 key", error)
        }
        return try DeviceCredential(key: SoftwareDeviceKey(key: key), certificateChain: contents.certificateChain)
    }

    /// Writes `data` to a new file (0600) and renames it over the old one.
    private func write(_ data: Data) throws {
        let manager = FileManager.default
        let temporary = directory.appendingPathComponent(".\(Self.fileName).\(UUID().uuidString)")
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard manager.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw Self.failure("the device key file could not be written", nil)
            }
            try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: temporary.path)
            guard rename(temporary.path, file.path) == 0 else {
                throw Self.failure("the device key file could not be replaced (errno \(errno))", nil)
            }
        } catch {
            try? manager.removeItem(at: temporary)
            if let error = error as? SignetClientError { throw error }
            throw Self.failure("the device key file could not be written", error)
        }
    }

    private static func failure(_ reason: String, _ underlying: (any Error)?) -> SignetClientError {
        SignetClientError(.deviceKeyUnavailable, isRetryable: false, reason: reason, underlying: underlying)
    }
}
