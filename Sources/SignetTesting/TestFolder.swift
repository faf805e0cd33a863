// Temporary folders for tests, all under one parent per test process, and the parents of ended runs removed.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where tests put their files: a server's data folder, an SQLite file, a key, a TLS certificate.
///
/// Every folder is made under one parent per test process, in a root of the user's own
/// (`$TMPDIR/signet-tests-<uid>`, mode 0700). A test that can remove its folder when done still
/// should; what one cannot (a server process's data, a store closed by a detached task) is
/// removed by a later run: the first folder a process makes removes the parents of processes that
/// have ended. So a machine that runs the suite again and again keeps at most the files of the
/// runs still going and of the last one, not of every run.
///
/// A process owns its parent by holding an exclusive `flock` on the parent's `.lock` file for as
/// long as it lives; the kernel drops the lock when the process ends, however it ends. A parent
/// is removed only by whoever takes that lock, so a live run's files are never removed, whatever
/// process numbers the runs have (containers on one kernel sharing a temporary folder included;
/// not a temporary folder on a network file system, where `flock` may not reach across
/// machines). Written by hand: Foundation has no such cleanup.
public enum TestFolder {
    /// A new, empty folder whose name starts with `label`.
    ///
    /// - Parameter create: `false` gives a path that does not exist yet (in a parent that does),
    ///   for code that should create the folder itself.
    public static func make(_ label: String, create: Bool = true) throws -> URL {
        let folder = try parent.get().appendingPathComponent("\(label)-\(UUID().uuidString)")
        if create { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        return folder
    }

    /// Runs `body` with a new folder (see ``make(_:create:)``) and removes it afterwards, however `body` ends.
    public static func with<Result>(_ label: String, create: Bool = true, _ body: (URL) async throws -> Result) async throws -> Result {
        let folder = try make(label, create: create)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    /// This process's parent folder, made (and the ended runs' removed) once.
    private static let parent = Result<URL, any Error>(catching: {
        let root = try ownRoot(in: FileManager.default.temporaryDirectory)
        removeEndedRuns(in: root)
        return try claimParent(in: root)
    })

    /// `<base>/signet-tests-<uid>`, made with mode 0700 if missing; refused unless it is a real
    /// folder (not a link) of this user's that nobody else may read or write. Internal for tests.
    static func ownRoot(in base: URL) throws -> URL {
        let root = base.appendingPathComponent("signet-tests-\(getuid())")
        let path = root.path
        if mkdir(path, 0o700) != 0 {
            let failure = errno
            guard failure == EEXIST else { throw TestFolderError("cannot make \(path): \(String(cString: strerror(failure)))") }
        }
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(), status.st_mode & 0o077 == 0 else {
            throw TestFolderError("\(path) is not a folder of this user's that only they may use (a link, another's, or open to others)")
        }
        return root
    }

    /// Makes this process's parent in `root` and locks it for the process's life. The parent is
    /// prepared under a name that cleaners skip (a leading dot), locked, then renamed into view,
    /// so no cleaner ever sees it unlocked.
    private static func claimParent(in root: URL) throws -> URL {
        let name = UUID().uuidString
        let staging = root.appendingPathComponent(".\(name)")
        let own = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
        let lockPath = staging.appendingPathComponent(lockName).path
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            if lock >= 0 { close(lock) }
            throw TestFolderError("cannot lock \(lockPath): \(String(cString: strerror(failure)))")
        }
        // The descriptor stays open, and the lock held, until the process ends.
        guard rename(staging.path, own.path) == 0 else {
            let failure = errno
            throw TestFolderError("cannot rename \(staging.path): \(String(cString: strerror(failure)))")
        }
        return own
    }

    /// Removes every parent in `root` whose lock nobody holds: its process has ended. A parent
    /// being prepared (a leading dot) is left alone unless it is an hour old (its process died
    /// while preparing it); one without a lock file is left alone.
    ///
    /// The lock file goes last, once everything else in the folder is gone: if something cannot
    /// be removed (a server left running by a killed run still writing there), the lock file
    /// stays, so a later run tries again. Internal for tests, which pass `now` and `remove`.
    static func removeEndedRuns(in root: URL, now: Date = Date(), remove: (URL) throws -> Void = { try FileManager.default.removeItem(at: $0) }) {
        let files = FileManager.default
        let names = (try? files.contentsOfDirectory(atPath: root.path)) ?? []
        for name in names {
            let folder = root.appendingPathComponent(name)
            if name.hasPrefix(".") {
                let modified = (try? files.attributesOfItem(atPath: folder.path))?[.modificationDate] as? Date
                guard let modified, now.timeIntervalSince(modified) > stalePreparation else { continue }
            }
            let lockPath = folder.appendingPathComponent(lockName).path
            let lock = open(lockPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard lock >= 0 else { continue }
            defer { close(lock) }
            // Another cleaner holding it, or the owner: either way, not ours to remove.
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { continue }
            let contents = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
            var removedAll = true
            for item in contents where item != lockName {
                do { try remove(folder.appendingPathComponent(item)) } catch { removedAll = false }
            }
            guard removedAll, unlink(lockPath) == 0 else { continue }
            rmdir(folder.path)
        }
    }

    /// How old a parent still being prepared must be before it counts as abandoned (seconds).
    static let stalePreparation: TimeInterval = 3600

    /// The file whose lock a parent's owner holds.
    static let lockName = ".lock"
}

/// Why a test folder could not be made.
public struct TestFolderError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
