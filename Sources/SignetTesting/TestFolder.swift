// Temporary folders for tests, all under one parent per test process, and the parents of ended runs removed.
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where tests put their files: a server's data folder, an SQLite file, a key, a TLS certificate.
///
/// Every folder is made under one parent per test process (`$TMPDIR/signet-tests/<pid>`). A test
/// that removes its folder when done still should; what one cannot (a store closed by a detached
/// task, a server process's data) is removed by the next run: the first folder a process makes
/// removes the parents of processes that have ended. So a machine that runs the suite again and
/// again keeps at most the last run's files, not every run's.
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
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("signet-tests")
        removeEndedRuns(in: root)
        let own = root.appendingPathComponent(String(getpid()))
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        return own
    })

    /// Removes the parents named after a process that no longer runs. One whose number a live
    /// process has taken again stays until that one ends too. Internal for tests.
    static func removeEndedRuns(in root: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for name in names {
            guard let pid = pid_t(name), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) == -1, errno == ESRCH {
                try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
            }
        }
    }
}
