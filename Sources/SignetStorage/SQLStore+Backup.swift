// A consistent copy of an SQLite store while the server runs, and putting one back.
import Foundation
import SQLKit
import SignetCore
import SignetStore

extension SQLStore {
    /// Writes a consistent copy of an SQLite store to `path` (SQLite's `VACUUM INTO`: one read
    /// transaction, so the copy is the database at one instant while writers go on). PostgreSQL
    /// stores are copied with `pg_dump`.
    ///
    /// - Throws: `invalidConfiguration` for PostgreSQL or when `path` exists; `storageFailure` when SQLite fails.
    public func backup(to path: String) async throws {
        guard let sqlite else { throw SignetError(.invalidConfiguration, "back a PostgreSQL store up with pg_dump (docs/operations.md)") }
        // The copy holds every secret of the store: owner-only before its first byte is written,
        // and made by this process (a file someone else made there first is refused).
        do { try PrivateFile.createEmpty(at: path) } catch let error as PrivateFileError where error.exists {
            throw SignetError(.invalidConfiguration, "\(path) exists; name a new file")
        } catch {
            throw SignetError(.invalidConfiguration, "cannot create the backup: \(error)")
        }
        do {
            try await writeQueuedAuditEvents()
            // No transaction may hold it: alone, after the open batch's commit.
            try await sqlite.routed(.alone).raw("VACUUM INTO \(bind: path)").run()
        } catch {
            unlink(path)
            throw SignetError(.storageFailure, "the backup failed: \(String(reflecting: error))")
        }
    }

    /// Flushes a file or a folder (its entries) to disk.
    private static func sync(_ path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw SignetError(.storageFailure, "cannot open \(path) to flush it") }
        defer { try? handle.close() }
        do { try handle.synchronize() } catch { throw SignetError(.storageFailure, "cannot flush \(path) to disk: \(error)") }
    }

    /// The files kept beside a SQLite store: SQLite's log and shared memory, and where other
    /// processes' writes say they wait (``WriteLockQueue``).
    private static let companionSuffixes = ["-wal", "-shm", "-waiting"]

    /// Checks that `path` is a Signet SQLite store this build can open (migrating it if it is
    /// older), then puts it at `destination`, which must not exist (or the server would be
    /// running on it). The copy is made next to `destination` and renamed into place.
    public static func restore(from path: String, to destination: String) async throws {
        guard FileManager.default.fileExists(atPath: path) else { throw SignetError(.invalidConfiguration, "no backup at \(path)") }
        // The place to itself: no server or command has a store there open, none opens one
        // until the restore ends, and no other restore shares the staging file below. The
        // destination is checked under the lock, so a restore that finished meanwhile is kept.
        let lock = try StoreLock(forStoreAt: destination, .exclusive)
        defer { lock?.release() }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: destination + suffix) {
            throw SignetError(.invalidConfiguration, "\(destination)\(suffix) exists: stop the server and move it away first")
        }
        let staging = destination + ".restoring"
        /// The staged copy with the files beside it. An interrupted restore's log would be
        /// replayed onto a new copy, so it goes first too.
        func removeStaging() { for suffix in [""] + companionSuffixes { try? FileManager.default.removeItem(atPath: staging + suffix) } }
        removeStaging()
        do {
            // Owner-only from its first byte, whatever the backup's own mode.
            try PrivateFile.copy(from: path, to: staging)
            // Opening migrates and proves it is a Signet store: its tables answer.
            let store: SQLStore
            do {
                store = try await SQLStore.sqlite(path: staging, synchronous: .full, laterFlush: InlineSQLiteDatabase.laterFlush, locking: false)
            } catch {
                throw SignetError(
                    .storageFailure, "\(path) is not a Signet SQLite store: \((error as? SignetError)?.reason ?? String(reflecting: error))")
            }
            let unready = await store.unreadiness()
            do {
                _ = try await store.listClients()
                // What the migrations wrote is in the log (a rebuilt audit trail can be hundreds of
                // megabytes): the file is moved into place without it, so it must hold everything.
                guard let database = store.sqlite else { throw SignetError(.storageFailure, "not an SQLite store") }
                do { try await database.copyLogIntoDatabaseCompletely() } catch {
                    throw SignetError(
                        .storageFailure, "the restored store could not be written out whole (a full disk, or another process using it): \(error)")
                }
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
            if let unready { throw SignetError(.storageFailure, "the backup is not a usable store: \(unready)") }
            // Empty now: everything is in the file (and `-waiting` is only ever empty).
            for suffix in companionSuffixes { try? FileManager.default.removeItem(atPath: staging + suffix) }
            // On disk before it is in place, and its new name on disk before the restore says done.
            try Self.sync(staging)
            guard rename(staging, destination) == 0 else {
                throw SignetError(.storageFailure, "cannot move the restored store into place (errno \(errno))")
            }
            try Self.sync(URL(fileURLWithPath: destination).deletingLastPathComponent().path)
        } catch let error as SignetError {
            removeStaging()
            throw error
        } catch let error as PrivateFileError {
            removeStaging()
            throw SignetError(.storageFailure, "cannot copy the backup: \(error)")
        } catch {
            removeStaging()
            throw SignetError(.storageFailure, "\(path) is not a Signet SQLite store: \(String(reflecting: error))")
        }
    }
}
