// Where the app keeps its DPoP key — RFC 9449.
import Crypto
import Foundation
import SignetCore

/// The installation's DPoP key: loaded when there is one, made and kept when there is none.
///
/// Every token the SDK gets is bound to this key (`cnf.jkt`, RFC 9449 §6), and so is a public
/// client's refresh token: lose the key and the user signs in again. Implementations must hand
/// out the same key to every caller, also when asked at the same moment.
///
/// On Apple platforms use ``SecureEnclaveDPoPKeyStore``; ``MemoryDPoPKeyStore`` and
/// ``FileDPoPKeyStore`` are for tests, command-line tools and Linux.
public protocol DPoPKeyStore: Sendable {
    /// The key, made and stored first if there is none yet.
    func key() async throws -> any DPoPSigningKey
}

/// A software P-256 key that lives as long as this store (for tests and short-lived tools).
public actor MemoryDPoPKeyStore: DPoPKeyStore {
    private var current: SoftwareDPoPKey?

    /// - Parameter key: the key to hand out; by default one is made on first use.
    public init(key: SoftwareDPoPKey? = nil) { self.current = key }

    public func key() -> any DPoPSigningKey {
        if let current { return current }
        let made = SoftwareDPoPKey()
        current = made
        return made
    }
}

/// A software P-256 key kept in a file only its owner can read (Linux and command-line tools;
/// on Apple platforms prefer ``SecureEnclaveDPoPKeyStore``, whose key cannot be copied).
public actor FileDPoPKeyStore: DPoPKeyStore {
    public let file: URL
    private var current: SoftwareDPoPKey?

    public init(file: URL) { self.file = file }

    public func key() throws -> any DPoPSigningKey {
        if let current { return current }
        let key: SoftwareDPoPKey
        if let data = FileManager.default.contents(atPath: file.path) {
            do {
                key = SoftwareDPoPKey(privateKey: try P256.Signing.PrivateKey(rawRepresentation: data))
            } catch {
                throw SignetClientError(.keyUnavailable, isRetryable: false, reason: "the DPoP key file does not hold a P-256 key", underlying: error)
            }
        } else {
            key = SoftwareDPoPKey()
            do { try PrivateFile.write(key.privateKey.rawRepresentation, to: file.path) } catch {
                throw SignetClientError(.keyUnavailable, isRetryable: false, reason: "the DPoP key file could not be written", underlying: error)
            }
        }
        current = key
        return key
    }
}
