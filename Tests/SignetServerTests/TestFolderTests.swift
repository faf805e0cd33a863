import Foundation
@testable import SignetTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Test folders: one parent per test process, the ended runs' removed")
struct TestFolderTests {
    @Test("a folder is made under this process's parent, and `with` removes it afterwards")
    func madeAndRemoved() async throws {
        let made = try TestFolder.make("probe")
        defer { try? FileManager.default.removeItem(at: made) }
        #expect(made.deletingLastPathComponent().lastPathComponent == String(getpid()))
        #expect(made.lastPathComponent.hasPrefix("probe-"))
        #expect(FileManager.default.fileExists(atPath: made.path))
        let notYet = try TestFolder.make("probe", create: false)
        #expect(!FileManager.default.fileExists(atPath: notYet.path))

        let used = try await TestFolder.with("probe") { folder in
            try Data("x".utf8).write(to: folder.appendingPathComponent("file"))
            return folder
        }
        #expect(!FileManager.default.fileExists(atPath: used.path))
    }

    @Test("a parent named after an ended process is removed; this one's, a live one's and other names stay")
    func endedRunsRemoved() throws {
        let root = try TestFolder.make("roots")
        defer { try? FileManager.default.removeItem(at: root) }
        // Above Linux's largest process number (2^22), so no process has it.
        let ended = "999999999"
        let names = [ended, String(getpid()), String(getppid()), "not-a-number", "0"]
        for name in names {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        TestFolder.removeEndedRuns(in: root)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: root.path))
        #expect(left == Set(names.filter { $0 != ended }))
    }
}
