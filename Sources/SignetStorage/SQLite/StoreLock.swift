// Who may use an SQLite store's place: the processes that have it open, or one restore.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import SignetCore
import Synchronization

/// A `flock` on `<database>-lock`, an owner-only file beside an SQLite store. Every process that
/// opens the store holds it shared while the store is open; `signet restore` holds it exclusively
/// while it puts a store in that place. So a restore never moves a file in under a running
/// server, and no server starts on a store a restore is putting in place. The kernel lets go of
/// the lock when the process ends, so none is ever left behind.
///
/// SQLite's own locks cannot do this: they are on the database file, which a restore replaces.
/// The lock file is owner-only (and one another user owns is refused), so no other user can
/// take the lock and keep the server from starting.
final class StoreLock: Sendable {
    /// The lock file's descriptor; -1 once released.
    private let descriptor: Mutex<Int32>

    enum Mode {
        /// The store is open (any number of processes).
        case shared
        /// A restore is putting a store in this place (one, and nobody has it open).
        case exclusive
    }

    /// The lock file of the store at `database`.
    static func path(of database: String) -> String { database + "-lock" }

    /// Takes the lock without waiting; throws at once when the other mode holds it, or the lock
    /// file cannot be used (another user's, a link, not a file). `nil` only on a read-only file
    /// system, or one without such locks (some network file systems): there the operator must
    /// not restore onto a store in use, as before the lock.
    init?(forStoreAt database: String, _ mode: Mode) throws {
        let path = Self.path(of: database)
        // The store's owner (through a link to it too): the service user even when root runs a
        // command on its store.
        var storeStatus = stat()
        let storeOwner = stat(database, &storeStatus) == 0 && storeStatus.st_mode & S_IFMT == S_IFREG ? (storeStatus.st_uid, storeStatus.st_gid) : nil
        let opened = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            let failure = errno
            if failure == EROFS { return nil }
            let folder = URL(fileURLWithPath: database).deletingLastPathComponent().path
            if failure == ENOENT { throw SignetError(.invalidConfiguration, "cannot use the folder \(folder): does it exist?") }
            throw SignetError(
                .invalidConfiguration,
                "cannot open or create the lock file \(path) (errno \(failure)): run as the store's owner, who may write \(folder); or another user's file, or a link, is there: move it away"
            )
        }
        var status = stat()
        // Nobody else may open it (and so take the lock): a plain file with one name, owner-only,
        // owned by this user or the store's owner. One root has just made for another's store
        // is handed to that owner, as SQLite does with its log, so the service can use it.
        let owners = [geteuid(), storeOwner?.0].compactMap { $0 }
        guard fstat(opened, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1, owners.contains(status.st_uid),
            status.st_mode & 0o077 == 0 || fchmod(opened, 0o600) == 0
        else {
            close(opened)
            throw SignetError(.invalidConfiguration, "the lock file \(path) belongs to another user or is no plain file: move it away")
        }
        if geteuid() == 0, status.st_uid == 0, let (owner, group) = storeOwner, owner != 0, fchown(opened, owner, group) != 0 {
            close(opened)
            throw SignetError(.invalidConfiguration, "cannot give the lock file \(path) to the store's owner (errno \(errno))")
        }
        guard flock(opened, (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
            let failure = errno
            close(opened)
            if failure == ENOLCK || failure == EOPNOTSUPP || failure == EINVAL { return nil }
            guard failure == EWOULDBLOCK else { throw SignetError(.invalidConfiguration, "cannot lock \(path) (errno \(failure))") }
            switch mode {
            case .shared: throw SignetError(.invalidConfiguration, "a restore of \(database) is running; open the store once it has finished")
            case .exclusive:
                throw SignetError(
                    .invalidConfiguration, "\(database) is in use: a server or a command has it open, or another restore runs; stop it first")
            }
        }
        descriptor = Mutex(opened)
    }

    /// Lets go of the lock; later calls do nothing.
    func release() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            close(descriptor)
            descriptor = -1
        }
    }

    deinit { release() }
}

/// The SQLite files of a store hold every secret Signet keeps (signing keys, password hashes,
/// the keys its HMACs use): only their owner may read them, whatever the folder's mode.
enum StoreFilePermissions {
    /// Creates the database file owner-only when there is none (SQLite then makes its log and
    /// shared-memory files with the same mode), and takes group and others' access off an
    /// existing one and the files beside it (never through a link, never another user's).
    /// Returns the files whose mode it changed.
    static func makeOwnerOnly(_ path: String) throws -> [String] {
        do { try PrivateFile.createEmpty(at: path) } catch let error as PrivateFileError where error.exists {
            // There already: tightened below.
        } catch {
            throw SignetError(.storageFailure, "cannot create the SQLite store: \(error)")
        }
        var changed: [String] = []
        for file in [path, path + "-wal", path + "-shm"] {
            let opened = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard opened >= 0 else { continue }
            defer { close(opened) }
            var status = stat()
            guard fstat(opened, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o077 != 0, status.st_uid == geteuid() else {
                continue
            }
            guard fchmod(opened, status.st_mode & 0o700) == 0 else {
                throw SignetError(.storageFailure, "cannot make \(file) owner-only (errno \(errno))")
            }
            changed.append(file)
        }
        return changed
    }
}
