// Files that hold secrets, owner-only from their first byte.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

/// Writes files that hold secrets (private keys, tokens, store copies) so that no other user can
/// open them at any moment.
///
/// Foundation's `FileManager.createFile(atPath:contents:attributes:)` writes a file with the
/// process's umask and sets the permissions asked for only afterwards: for a moment another user
/// may open it, and an open file stays readable after a `chmod`. These functions create the file
/// with mode 0600 in the `open` call itself (`O_CREAT | O_EXCL | O_NOFOLLOW`), which no library
/// in the project's set offers, hence the POSIX calls.
public enum PrivateFile {
    /// Writes `data` to `path`, owner-only.
    ///
    /// - Parameter replacing: `true` replaces what is at `path`: the data goes to a new file
    ///   next to it, which is renamed into place, so a reader sees the old contents or the new,
    ///   never part of them. `false` creates `path` and fails with ``PrivateFileError/exists``
    ///   when anything, a symbolic link included, is there.
    public static func write(_ data: Data, to path: String, replacing: Bool = true) throws {
        guard replacing else {
            let descriptor = try create(path)
            try finish(descriptor, path: path, removingOnFailure: path) { try writeAll(data, to: descriptor, path: path) }
            return
        }
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)").path
        let descriptor = try create(temporary)
        try finish(descriptor, path: temporary, removingOnFailure: temporary) { try writeAll(data, to: descriptor, path: temporary) }
        guard rename(temporary, path) == 0 else {
            let failure = PrivateFileError(path: path, operation: "rename", code: errno)
            unlink(temporary)
            throw failure
        }
    }

    /// Creates an empty owner-only file at `path`, for another writer to fill (SQLite's `VACUUM
    /// INTO` accepts an empty file). Fails with ``PrivateFileError/exists`` when anything is there.
    public static func createEmpty(at path: String) throws {
        let descriptor = try create(path)
        try finish(descriptor, path: path, removingOnFailure: path) {}
    }

    /// Copies the file at `source` to a new owner-only file at `destination`, in slices, so a
    /// large file is never held in memory. Fails with ``PrivateFileError/exists`` when anything
    /// is at `destination`.
    public static func copy(from source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw PrivateFileError(path: source, operation: "open", code: errno) }
        defer { close(input) }
        let output = try create(destination)
        try finish(output, path: destination, removingOnFailure: destination) {
            var slice = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = slice.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw PrivateFileError(path: source, operation: "read", code: errno)
                }
                if count == 0 { return }
                try writeAll(Data(slice[0..<count]), to: output, path: destination)
            }
        }
    }

    /// `open` with `O_EXCL` and mode 0600: the only way the file comes to exist.
    private static func create(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PrivateFileError(path: path, operation: "create", code: errno) }
        return descriptor
    }

    /// Runs `body`, then flushes and closes the file; on any failure closes it and removes what
    /// was created.
    private static func finish(_ descriptor: Int32, path: String, removingOnFailure created: String, _ body: () throws -> Void) throws {
        do {
            try body()
            guard fsync(descriptor) == 0 else { throw PrivateFileError(path: path, operation: "fsync", code: errno) }
        } catch {
            close(descriptor)
            unlink(created)
            throw error
        }
        guard close(descriptor) == 0 else {
            let failure = PrivateFileError(path: path, operation: "close", code: errno)
            unlink(created)
            throw failure
        }
    }

    private static func writeAll(_ data: Data, to descriptor: Int32, path: String) throws {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw PrivateFileError(path: path, operation: "write", code: errno)
                }
                offset += written
            }
        }
    }
}

/// POSIX `write`, which ``PrivateFile/write(_:to:replacing:)`` hides inside the type.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, bytes, count) }

/// Why a ``PrivateFile`` operation failed: the file, the system call and its `errno`.
public struct PrivateFileError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let operation: String
    public let code: Int32

    /// Something was already at the path (`EEXIST`).
    public var exists: Bool { code == EEXIST }

    public var description: String {
        exists ? "\(path) exists" : "cannot \(operation) \(path): \(String(cString: strerror(code)))"
    }
}
