// What guards an SQLite store's files: owner-only modes, the folder lock a restore needs, and
// which `--database` values name a store.
import Foundation
import Logging
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetTesting
import Synchronization
import Testing

@Suite("SQLite store files")
struct SQLiteStoreFilesTests {
    func mode(_ path: String) throws -> Int { try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) }

    @Test("a new store and its log are owner-only; a store found readable by others is made owner-only when opened, and says so in the log")
    func ownerOnly() async throws {
        try await withTemporarySQLitePath("owner-only") { path in
            let store = try await SQLStore.sqlite(path: path)
            _ = try await store.listClients()
            try await store.insertUser(UserRecord(id: "u1", username: "dora", passwordHash: "$2b$04$hash", createdAt: Date()))
            #expect(try mode(path) == 0o600)
            #expect(try mode(path + "-wal") == 0o600, "SQLite gives its log the database file's mode")
            try await store.close()

            for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) { #expect(chmod(file, 0o644) == 0) }
            let capture = LogLines()
            let reopened = try await SQLStore.sqlite(path: path, logger: capture.logger)
            #expect(try await reopened.user(username: "dora") != nil)
            #expect(try mode(path) == 0o600)
            #expect(capture.events == ["store.made_owner_only"])
            try await reopened.close()
        }
    }

    @Test("while a store is open, a restore into its folder is refused; while a restore holds the folder, no store in it opens; once closed, both go on")
    func folderLock() async throws {
        try await TestFolder.with("folder-lock") { folder in
            let backup = try await TestFolder.with("folder-lock-backup") { other -> String in
                let source = try await SQLStore.sqlite(path: other.appendingPathComponent("signet.sqlite").path)
                let file = folder.deletingLastPathComponent().appendingPathComponent("folder-lock-\(UUID().uuidString).sqlite").path
                try await source.backup(to: file)
                try await source.close()
                return file
            }
            defer { try? FileManager.default.removeItem(atPath: backup) }
            let running = try await SQLStore.sqlite(path: folder.appendingPathComponent("signet.sqlite").path)
            let destination = folder.appendingPathComponent("restored.sqlite").path
            let refused = await #expect(throws: SignetError.self) { try await SQLStore.restore(from: backup, to: destination) }
            #expect(refused?.reason.contains("is in use") == true, "\(String(describing: refused))")
            #expect(!FileManager.default.fileExists(atPath: destination))
            try await running.close()

            let restore = try #require(try StoreFolderLock(folderOf: destination, .exclusive))
            let opening = await #expect(throws: SignetError.self) { try await SQLStore.sqlite(path: destination) }
            #expect(opening?.reason.contains("a restore into") == true, "\(String(describing: opening))")
            #expect(!FileManager.default.fileExists(atPath: destination), "a refused opening makes no store")
            restore.release()

            try await SQLStore.restore(from: backup, to: destination)
            #expect(try mode(destination) == 0o600)
            let restored = try await SQLStore.sqlite(path: destination)
            _ = try await restored.listClients()
            try await restored.close()
        }
    }

    @Test("a --database value is an SQLite path, sqlite://, or postgres:// in any case; any other scheme is refused without echoing the rest of the URL")
    func locations() async throws {
        #expect(SQLStore.sqlitePath(of: "/srv/signet/signet.sqlite") == "/srv/signet/signet.sqlite")
        #expect(SQLStore.sqlitePath(of: "sqlite:///srv/signet.sqlite") == "/srv/signet.sqlite")
        #expect(SQLStore.sqlitePath(of: "SQLite:///srv/signet.sqlite") == "/srv/signet.sqlite")
        #expect(SQLStore.sqlitePath(of: "./odd://name.sqlite") == "./odd://name.sqlite", "not a scheme: a path")
        for url in ["postgres://u:pw@db/signet", "Postgres://u:pw@db/signet", "POSTGRESQL://u:pw@db/signet"] {
            #expect(SQLStore.sqlitePath(of: url) == nil, "\(url)")
            #expect(SQLStore.locationProblem(url) == nil, "\(url)")
        }
        let problem = try #require(SQLStore.locationProblem("mysql://root:S3cretDbPw@db.internal/signet"))
        #expect(problem.contains("mysql://"))
        #expect(!problem.contains("S3cret"))
        let opened = await #expect(throws: SignetError.self) { try await SQLStore.open("mysql://root:S3cretDbPw@db.internal/signet") }
        #expect(opened?.reason.contains("S3cret") == false)
    }
}

/// The `event` of each line a store logs (through the server's own JSON log output).
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    var logger: Logger {
        LogOutput(level: .trace, format: .json).makeLogger(label: "signet") { [self] line in lines.withLock { $0.append(line) } }
    }

    var events: [String] {
        lines.withLock { $0 }.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["event"] as? String
        }
    }
}
