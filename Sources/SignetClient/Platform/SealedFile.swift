// A JSON value in one file only its owner can read, sealed with AES-GCM under the caller's key.
import Crypto
import Foundation
import SignetCore

/// One sealed file: a header, a 16-byte check value (HMAC-SHA256 of a fixed label under the
/// key, so a wrong key is told apart from an altered file) and an AES-GCM box of the JSON,
/// authenticated with the header. Written to a new file (0600, in a 0700 folder) and renamed
/// over the old one, so a crash leaves the old value or the new, never a mix.
///
/// Used by ``SoftwareDeviceKeyStore`` and ``SoftwareAuthenticatorKeyStore``; every failure is a
/// ``SignetClientError`` with `code`.
struct SealedFile: Sendable {
    let directory: URL
    let fileName: String
    /// Four letters and a version byte that name the kind of file.
    let magic: [UInt8]
    let checkLabel: Data
    let key: SymmetricKey
    /// What the file holds, for error reasons ("device key").
    let noun: String
    let code: SignetClientError.Code

    var file: URL { directory.appendingPathComponent(fileName) }

    /// The value kept, or `nil` when there is no file.
    func read<Value: Decodable>(_ type: Value.Type) throws -> Value? {
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        let header = self.header
        guard data.count > header.count, Array(data.prefix(magic.count)) == magic else {
            throw failure("\(fileName) is not a Signet \(noun) file", nil)
        }
        guard Array(data.prefix(header.count)) == header else {
            throw failure("the encryption key is not the one the \(noun) was sealed with", nil)
        }
        do {
            let box = try AES.GCM.SealedBox(combined: data.dropFirst(header.count))
            return try JSONDecoder().decode(Value.self, from: try AES.GCM.open(box, using: key, authenticating: header))
        } catch {
            throw failure("the \(noun) file was altered", error)
        }
    }

    /// Seals `value` and replaces the file with it.
    func write(_ value: some Encodable) throws {
        let header = self.header
        let sealed: Data
        do {
            let box = try AES.GCM.seal(try JSONEncoder().encode(value), using: key, authenticating: header)
            guard let combined = box.combined else { throw failure("AES-GCM gave no combined box", nil) }
            sealed = Data(header) + combined
        } catch let error as SignetClientError { throw error } catch {
            throw failure("the \(noun) could not be sealed", error)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Written next to the file and renamed over it: a reader sees the old box or the new.
            try PrivateFile.write(sealed, to: file.path)
        } catch {
            throw failure("the \(noun) file could not be written", error)
        }
    }

    /// Deletes the file; none is not an error.
    func delete() throws {
        do { try FileManager.default.removeItem(at: file) } catch  where !FileManager.default.fileExists(atPath: file.path) {
            return
        } catch {
            throw failure("the \(noun) file could not be deleted", error)
        }
    }

    private var header: [UInt8] { magic + Array(HMAC<SHA256>.authenticationCode(for: checkLabel, using: key).prefix(16)) }

    private func failure(_ reason: String, _ underlying: (any Error)?) -> SignetClientError {
        SignetClientError(code, isRetryable: false, reason: reason, underlying: underlying)
    }
}
