// Files that hold secrets: owner-only, never written through a link or over a file someone else made.
import Foundation
import SignetCore
import Testing

@Suite("Private files")
struct PrivateFileTests {
    /// A fresh folder of this test's own, removed afterwards.
    func withFolder(_ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("private-file-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    func mode(_ path: String) throws -> Int { try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) }
    func names(in folder: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder).sorted() }

    @Test("write makes an owner-only file, and replaces one that was readable by others with a new owner-only file, leaving nothing beside it")
    func writeReplaces() throws {
        try withFolder { folder in
            let path = folder + "/key.json"
            try PrivateFile.write(Data("first".utf8), to: path)
            #expect(try mode(path) == 0o600)
            #expect(FileManager.default.contents(atPath: path) == Data("first".utf8))

            #expect(chmod(path, 0o644) == 0)
            try PrivateFile.write(Data("second".utf8), to: path)
            #expect(try mode(path) == 0o600)
            #expect(FileManager.default.contents(atPath: path) == Data("second".utf8))
            #expect(try names(in: folder) == ["key.json"], "no temporary file is left")
        }
    }

    @Test("without replacing, an existing file or a symbolic link is refused as existing and left as it was")
    func exclusive() throws {
        try withFolder { folder in
            let path = folder + "/key.json"
            try PrivateFile.write(Data("mine".utf8), to: path, replacing: false)
            #expect(try mode(path) == 0o600)
            let again = #expect(throws: PrivateFileError.self) { try PrivateFile.write(Data("theirs".utf8), to: path, replacing: false) }
            #expect(again?.exists == true)
            #expect(FileManager.default.contents(atPath: path) == Data("mine".utf8))

            // A link planted where the file is to go: never followed.
            let target = folder + "/elsewhere"
            let link = folder + "/backup.sqlite"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            let linked = #expect(throws: PrivateFileError.self) { try PrivateFile.createEmpty(at: link) }
            #expect(linked?.exists == true)
            #expect(!FileManager.default.fileExists(atPath: target), "nothing was written through the link")
        }
    }

    @Test("createEmpty makes an empty owner-only file; copy makes an owner-only copy of a file readable by all, and refuses an existing destination")
    func createAndCopy() throws {
        try withFolder { folder in
            let empty = folder + "/empty"
            try PrivateFile.createEmpty(at: empty)
            #expect(try mode(empty) == 0o600)
            #expect(FileManager.default.contents(atPath: empty) == Data())

            let source = folder + "/source"
            let bytes = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            #expect(FileManager.default.createFile(atPath: source, contents: bytes, attributes: [.posixPermissions: 0o644]))
            let copy = folder + "/copy"
            try PrivateFile.copy(from: source, to: copy)
            #expect(try mode(copy) == 0o600)
            #expect(FileManager.default.contents(atPath: copy) == bytes, "every slice of a file larger than one is copied")
            let twice = #expect(throws: PrivateFileError.self) { try PrivateFile.copy(from: source, to: copy) }
            #expect(twice?.exists == true)
            let missing = #expect(throws: PrivateFileError.self) { try PrivateFile.copy(from: folder + "/none", to: folder + "/other") }
            #expect(missing?.exists == false)
            #expect(!FileManager.default.fileExists(atPath: folder + "/other"))
        }
    }
}
