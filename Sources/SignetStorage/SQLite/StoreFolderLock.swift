// Who may use the folder of an SQLite store: the processes that have a store in it open, or one restore.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SignetCore

/// A `flock` on the folder an SQLite store is in. Every process that opens a store holds it
/// shared while the store is open; `signet restore` holds it exclusively while it puts a store in
/// place. So a restore never moves a file in under a running server, and no server starts on a
/// folder while a restore works in it. The kernel lets go of the lock when the process ends, so
/// none is ever left behind.
///
/// SQLite's own locks cannot do this: they are on the database file, which a restore replaces.
struct StoreFolderLock: Sendable {
    private let descriptor: Int32

    enum Mode {
        /// A store in the folder is open (any number of processes).
        case shared
        /// A restore into the folder is running (one, and no store open).
        case exclusive
    }

    /// Takes the lock without waiting; throws at once when the other mode holds it, or the
    /// folder is not there. `nil` where the folder may be written but not read, or its file system
    /// has no such locks (some network file systems): there the operator must not restore into a
    /// folder in use, as before the lock existed.
    init?(folderOf path: String, _ mode: Mode) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let failure = errno
            if failure == EACCES { return nil }
            throw SignetError(.invalidConfiguration, "cannot open the folder \(folder) (errno \(failure)): does it exist?")
        }
        guard flock(descriptor, (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
            let failure = errno
            close(descriptor)
            if failure == ENOLCK || failure == EOPNOTSUPP || failure == EINVAL { return nil }
            guard failure == EWOULDBLOCK else { throw SignetError(.invalidConfiguration, "cannot lock the folder \(folder) (errno \(failure))") }
            switch mode {
            case .shared: throw SignetError(.invalidConfiguration, "a restore into \(folder) is running; open the store once it has finished")
            case .exclusive:
                throw SignetError(
                    .invalidConfiguration, "\(folder) is in use: a server or a command has a store in it open, or another restore runs; stop it first")
            }
        }
    }

    func release() { close(descriptor) }
}

/// The SQLite files of a store hold every secret Signet keeps (signing keys, password hashes,
/// the keys its HMACs use): only their owner may read them, whatever the folder's mode.
enum StoreFilePermissions {
    /// Creates the database file owner-only when there is none (SQLite then makes its log and
    /// shared-memory files with the same mode), and takes group and others' access off an
    /// existing one and the files beside it. Returns the files whose mode it changed.
    static func makeOwnerOnly(_ path: String) throws -> [String] {
        do { try PrivateFile.createEmpty(at: path) } catch let error as PrivateFileError where error.exists {
            // There already: tightened below.
        } catch {
            throw SignetError(.storageFailure, "cannot create the SQLite store: \(error)")
        }
        var changed: [String] = []
        for file in [path, path + "-wal", path + "-shm"] {
            var status = stat()
            guard lstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o077 != 0, status.st_uid == geteuid() else { continue }
            guard chmod(file, status.st_mode & 0o700) == 0 else {
                throw SignetError(.storageFailure, "cannot make \(file) owner-only (errno \(errno))")
            }
            changed.append(file)
        }
        return changed
    }
}
