import Foundation
@testable import SignetTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("Test folders: one locked parent per test process, the ended runs' removed")
struct TestFolderTests {
    @Test("a folder is made under this process's locked parent in the user's own root, and `with` removes it afterwards")
    func madeAndRemoved() async throws {
        let made = try TestFolder.make("probe")
        defer { try? FileManager.default.removeItem(at: made) }
        let parent = made.deletingLastPathComponent()
        #expect(parent.deletingLastPathComponent().lastPathComponent == "signet-tests-\(getuid())")
        #expect(made.lastPathComponent.hasPrefix("probe-"))
        #expect(FileManager.default.fileExists(atPath: made.path))
        // This process holds its parent's lock: another open of the file cannot take it.
        let lock = open(parent.appendingPathComponent(TestFolder.lockName).path, O_RDONLY)
        #expect(lock >= 0)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) != 0)
        // So a cleaner leaves it alone.
        TestFolder.removeEndedRuns(in: parent.deletingLastPathComponent())
        #expect(FileManager.default.fileExists(atPath: made.path))

        let notYet = try TestFolder.make("probe", create: false)
        #expect(!FileManager.default.fileExists(atPath: notYet.path))
        let used = try await TestFolder.with("probe") { folder in
            try Data("x".utf8).write(to: folder.appendingPathComponent("file"))
            return folder
        }
        #expect(!FileManager.default.fileExists(atPath: used.path))
    }

    @Test("the root is made 0700; a link, a folder open to others or another user's is refused")
    func rootIsTheUsersOwn() throws {
        let base = try TestFolder.make("base")
        defer { try? FileManager.default.removeItem(at: base) }
        let root = try TestFolder.ownRoot(in: base)
        #expect(root.lastPathComponent == "signet-tests-\(getuid())")
        var status = stat()
        #expect(lstat(root.path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o700)
        #expect(try TestFolder.ownRoot(in: base).path == root.path, "an existing root of one's own is taken as it is")

        #expect(chmod(root.path, 0o755) == 0)
        #expect(throws: TestFolderError.self) { try TestFolder.ownRoot(in: base) }
        #expect(chmod(root.path, 0o700) == 0)

        let elsewhere = try TestFolder.make("elsewhere")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        #expect(chmod(elsewhere.path, 0o700) == 0)
        let linked = try TestFolder.make("linked")
        defer { try? FileManager.default.removeItem(at: linked) }
        try FileManager.default.createSymbolicLink(at: linked.appendingPathComponent("signet-tests-\(getuid())"), withDestinationURL: elsewhere)
        #expect(throws: TestFolderError.self) { try TestFolder.ownRoot(in: linked) }

        // Another user's root: only root can make one to try.
        if getuid() == 0 {
            #expect(chown(root.path, 1, 1) == 0)
            #expect(throws: TestFolderError.self) { try TestFolder.ownRoot(in: base) }
        }
    }

    @Test("a parent whose lock nobody holds is removed; a held one, one being prepared and one without a lock file stay")
    func endedRunsRemoved() throws {
        let root = try TestFolder.make("roots")
        defer { try? FileManager.default.removeItem(at: root) }
        func parent(_ name: String, lockFile: Bool) throws -> URL {
            let folder = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("data".utf8).write(to: folder.appendingPathComponent("signet.sqlite"))
            if lockFile { try Data().write(to: folder.appendingPathComponent(TestFolder.lockName)) }
            return folder
        }
        _ = try parent("ended", lockFile: true)
        let live = try parent("live", lockFile: true)
        _ = try parent(".preparing", lockFile: true)
        _ = try parent("no-lock-file", lockFile: false)
        // A live run: its lock held on an open file of its own, as the owner holds it.
        let held = open(live.appendingPathComponent(TestFolder.lockName).path, O_RDWR)
        #expect(held >= 0)
        defer { close(held) }
        #expect(flock(held, LOCK_EX | LOCK_NB) == 0)

        TestFolder.removeEndedRuns(in: root)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: root.path))
        #expect(left == ["live", ".preparing", "no-lock-file"])

        // A parent whose process died while preparing it goes once it is an hour old.
        TestFolder.removeEndedRuns(in: root, now: Date().addingTimeInterval(TestFolder.stalePreparation + 60))
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: root.path)) == ["live", "no-lock-file"])
    }

    @Test("an ended run's parent that cannot be emptied keeps its lock file, so a later run tries again")
    func lockFileGoesLast() throws {
        let root = try TestFolder.make("roots")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("ended")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["signet.sqlite", "stuck", TestFolder.lockName] { try Data().write(to: folder.appendingPathComponent(name)) }
        struct Refused: Error {}
        // A file that will not go (as one a server left running keeps writing).
        TestFolder.removeEndedRuns(in: root) { item in
            if item.lastPathComponent == "stuck" { throw Refused() }
            try FileManager.default.removeItem(at: item)
        }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) == ["stuck", TestFolder.lockName])
        TestFolder.removeEndedRuns(in: root)
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
}
