import Crypto
import Foundation
import SignetClient
import Testing
import X509

@Suite("Device key stores: the software store seals key and chain at rest; the memory store for tests")
struct DeviceKeyStoreTests {
    static let encryptionKey = SymmetricKey(size: .bits256)

    /// A store in `directory` holding a key with a certificate from `ca`.
    static func filledStore(_ directory: URL, ca: TestDeviceCA, key encryptionKey: SymmetricKey = encryptionKey) async throws -> (
        SoftwareDeviceKeyStore, [String]
    ) {
        let store = SoftwareDeviceKeyStore(directory: directory, encryptionKey: encryptionKey)
        let key = await store.makeKey()
        let chain = try ca.issue(publicKey: key.privateKey.publicKey, instanceID: "instance-1")
        try await store.save(key, certificateChain: chain)
        return (store, chain)
    }

    @Test("round trip: a new store on the same folder and key loads the same key and chain")
    func roundTrip() async throws {
        try await withTemporaryDirectory { directory in
            let ca = try TestDeviceCA()
            let (store, chain) = try await Self.filledStore(directory, ca: ca)
            let saved = try #require(try await store.load())
            let reopened = SoftwareDeviceKeyStore(directory: directory, encryptionKey: Self.encryptionKey)
            let loaded = try #require(try await reopened.load())
            #expect(loaded.certificateChain == chain)
            #expect(loaded.key.privateKey.publicKey == saved.key.privateKey.publicKey)
            #expect(loaded.instanceID == "instance-1")
            #expect(loaded.serialNumber == saved.serialNumber)
            // The loaded key still signs: a signature it makes verifies under the certificate's key.
            let software = try #require(loaded.key as? SoftwareDeviceKey)
            let signature = try software.key.signature(for: Data("hello".utf8))
            #expect(software.key.publicKey.isValidSignature(signature, for: Data("hello".utf8)))
        }
    }

    @Test("an empty folder (or a missing one) holds no credential; save makes the folder")
    func empty() async throws {
        try await withTemporaryDirectory { directory in
            let store = SoftwareDeviceKeyStore(directory: directory.appendingPathComponent("nested"), encryptionKey: Self.encryptionKey)
            #expect(try await store.load() == nil)
            let ca = try TestDeviceCA()
            let key = await store.makeKey()
            try await store.save(key, certificateChain: try ca.issue(publicKey: key.privateKey.publicKey, instanceID: "x"))
            #expect(try await store.load() != nil)
        }
    }

    @Test("the file is readable by its owner only (0600) and holds neither the key nor the chain in clear")
    func permissions() async throws {
        try await withTemporaryDirectory { directory in
            let (store, chain) = try await Self.filledStore(directory, ca: try TestDeviceCA())
            let file = await store.file
            let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(permissions == 0o600)
            let contents = try Data(contentsOf: file)
            let software = try #require(try await store.load()?.key as? SoftwareDeviceKey)
            #expect(contents.range(of: software.key.rawRepresentation) == nil)
            #expect(contents.range(of: Data("BEGIN CERTIFICATE".utf8)) == nil)
            #expect(contents.range(of: Data(chain[0].utf8.prefix(80))) == nil)
            // Only the sealed file is left in the folder: no temporary file remains.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [SoftwareDeviceKeyStore.fileName])
        }
    }

    @Test("a wrong encryption key is a device_key_unavailable error that says so, not a crash")
    func wrongKey() async throws {
        try await withTemporaryDirectory { directory in
            _ = try await Self.filledStore(directory, ca: try TestDeviceCA())
            let other = SoftwareDeviceKeyStore(directory: directory, encryptionKey: SymmetricKey(size: .bits256))
            do {
                _ = try await other.load()
                Issue.record("another encryption key must not open the file")
            } catch let error as SignetClientError {
                #expect(error.code == .deviceKeyUnavailable)
                #expect(error.reason?.contains("encryption key") == true)
            }
        }
    }

    @Test("a tampered file is an error: a flipped byte of the box, a cut file, a foreign file")
    func tampered() async throws {
        try await withTemporaryDirectory { directory in
            let (store, _) = try await Self.filledStore(directory, ca: try TestDeviceCA())
            let file = await store.file
            let original = try Data(contentsOf: file)
            var flipped = original
            flipped[flipped.count - 20] ^= 0x01
            let cases: [(Data, String)] = [
                (flipped, "altered"), (original.prefix(30), "altered"), (Data("not a key file at all".utf8), "not a Signet device key file"),
            ]
            for (contents, reason) in cases {
                try contents.write(to: file)
                let fresh = SoftwareDeviceKeyStore(directory: directory, encryptionKey: Self.encryptionKey)
                do {
                    _ = try await fresh.load()
                    Issue.record("a tampered file must not load")
                } catch let error as SignetClientError {
                    #expect(error.code == .deviceKeyUnavailable)
                    #expect(error.reason?.contains(reason) == true, "\(error)")
                }
            }
        }
    }

    @Test("delete removes key and chain; deleting again is no error")
    func delete() async throws {
        try await withTemporaryDirectory { directory in
            let (store, _) = try await Self.filledStore(directory, ca: try TestDeviceCA())
            try await store.delete()
            #expect(try await store.load() == nil)
            #expect(!FileManager.default.fileExists(atPath: await store.file.path))
            try await store.delete()
            #expect(try await SoftwareDeviceKeyStore(directory: directory, encryptionKey: Self.encryptionKey).load() == nil)
        }
    }

    @Test("save refuses a chain that certifies another key, an empty chain, and a key made elsewhere; the kept pair stays")
    func refusesMismatch() async throws {
        try await withTemporaryDirectory { directory in
            let ca = try TestDeviceCA()
            let (store, chain) = try await Self.filledStore(directory, ca: ca)
            let key = await store.makeKey()
            let foreignChain = try ca.issue(publicKey: SoftwareDeviceKey().privateKey.publicKey, instanceID: "other")
            await #expect(throws: SignetClientError(.deviceKeyUnavailable, isRetryable: false)) {
                try await store.save(key, certificateChain: foreignChain)
            }
            await #expect(throws: SignetClientError(.deviceKeyUnavailable, isRetryable: false)) { try await store.save(key, certificateChain: []) }
            await #expect(throws: SignetClientError(.deviceKeyUnavailable, isRetryable: false)) {
                try await store.save(key, certificateChain: ["not PEM"])
            }
            struct ForeignKey: DeviceKey { let privateKey = Certificate.PrivateKey(P256.Signing.PrivateKey()) }
            await #expect(throws: SignetClientError(.misuse, isRetryable: false)) { try await store.save(ForeignKey(), certificateChain: chain) }
            let reopened = try #require(try await SoftwareDeviceKeyStore(directory: directory, encryptionKey: Self.encryptionKey).load())
            #expect(reopened.certificateChain == chain)
        }
    }

    @Test("the memory store keeps what it is given and forgets on delete; keys print as ****")
    func memoryStore() async throws {
        let store = MemoryDeviceKeyStore()
        #expect(await store.load() == nil)
        let key = await store.makeKey()
        #expect(String(describing: key) == "SoftwareDeviceKey(****)")
        #expect(String(reflecting: key).contains("****"))
        let credential = try DeviceCredential(
            key: key, certificateChain: try TestDeviceCA().issue(publicKey: key.privateKey.publicKey, instanceID: "m"))
        #expect(!String(describing: credential).contains((key as! SoftwareDeviceKey).pemRepresentation))
        try await store.save(key, certificateChain: credential.certificateChain)
        #expect(await store.load()?.instanceID == "m")
        await store.delete()
        #expect(await store.load() == nil)
    }
}
