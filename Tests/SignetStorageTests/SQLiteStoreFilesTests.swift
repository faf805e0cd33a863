// What guards an SQLite store's files: owner-only modes, the folder lock a restore needs, and
// which `--database` values name a store.
import Foundation
import Logging
import SignetCore
import SignetServer
@testable import SignetStorage
import SignetStore
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

    @Test(
        "while a store is open, a restore onto it is refused; while a restore holds a store's place, the store does not open there; once released, both go on; the lock file is owner-only and another user's is refused"
    )
    func storeLock() async throws {
        try await TestFolder.with("store-lock") { folder in
            let backup = folder.appendingPathComponent("backup.sqlite").path
            let running = try await SQLStore.sqlite(path: folder.appendingPathComponent("signet.sqlite").path)
            try await running.backup(to: backup)
            let refused = await #expect(throws: SignetError.self) {
                try await SQLStore.restore(from: backup, to: folder.appendingPathComponent("signet.sqlite").path)
            }
            #expect(refused?.reason.contains("is in use") == true, "\(String(describing: refused))")
            #expect(try mode(StoreLock.path(of: folder.appendingPathComponent("signet.sqlite").path)) == 0o600)
            // A lock file of ours that others could open (and so lock) is made owner-only again.
            let copied = folder.appendingPathComponent("copied.sqlite").path
            #expect(FileManager.default.createFile(atPath: StoreLock.path(of: copied), contents: nil, attributes: [.posixPermissions: 0o644]))
            let copiedStore = try await SQLStore.sqlite(path: copied)
            #expect(try mode(StoreLock.path(of: copied)) == 0o600)
            try await copiedStore.close()

            // A restore onto another place in the same folder is no business of the open store.
            let destination = folder.appendingPathComponent("restored.sqlite").path
            let restore = try #require(try StoreLock(forStoreAt: destination, .exclusive))
            let opening = await #expect(throws: SignetError.self) { try await SQLStore.sqlite(path: destination) }
            #expect(opening?.reason.contains("a restore of") == true, "\(String(describing: opening))")
            #expect(!FileManager.default.fileExists(atPath: destination), "a refused opening makes no store")
            restore.release()
            restore.release()

            try await SQLStore.restore(from: backup, to: destination)
            #expect(try mode(destination) == 0o600)
            let restored = try await SQLStore.sqlite(path: destination)
            _ = try await restored.listClients()
            try await restored.close()
            try await running.close()

            // A hard link to another file is no lock file.
            let linked = folder.appendingPathComponent("linked.sqlite").path
            #expect(link(backup, StoreLock.path(of: linked)) == 0)
            let hardLink = await #expect(throws: SignetError.self) { try await SQLStore.sqlite(path: linked) }
            #expect(hardLink?.reason.contains("no plain file") == true, "\(String(describing: hardLink))")

            // Only where the tests may give a file to another user: a lock file someone else made
            // (to hold the lock and keep the server from starting) is refused, not used; one root
            // makes for another user's store is given to that user.
            if geteuid() == 0 {
                let served = folder.appendingPathComponent("served.sqlite").path
                let servedStore = try await SQLStore.sqlite(path: served)
                try await servedStore.close()
                #expect(chown(served, 65534, 65534) == 0)
                #expect(unlink(StoreLock.path(of: served)) == 0)
                let asRoot = try await SQLStore.sqlite(path: served)
                try await asRoot.close()
                let lockOwner = try FileManager.default.attributesOfItem(atPath: StoreLock.path(of: served))[.ownerAccountID] as? Int
                #expect(lockOwner == 65534, "the service user can still take the lock after root's command")
                // The same through a link to the store.
                let viaLink = folder.appendingPathComponent("via-link.sqlite").path
                try FileManager.default.createSymbolicLink(atPath: viaLink, withDestinationPath: served)
                let linkedStore = try await SQLStore.sqlite(path: viaLink)
                try await linkedStore.close()
                #expect(try FileManager.default.attributesOfItem(atPath: StoreLock.path(of: viaLink))[.ownerAccountID] as? Int == 65534)

                let planted = folder.appendingPathComponent("planted.sqlite").path
                #expect(FileManager.default.createFile(atPath: StoreLock.path(of: planted), contents: nil, attributes: [.posixPermissions: 0o666]))
                #expect(chown(StoreLock.path(of: planted), 65534, 65534) == 0)
                let foreign = await #expect(throws: SignetError.self) { try await SQLStore.sqlite(path: planted) }
                #expect(foreign?.reason.contains("belongs to another user") == true, "\(String(describing: foreign))")
            }
        }
    }

    @Test(
        "a --database value is an SQLite path, sqlite://, or postgres:// in any case; any other scheme is refused without echoing the rest of the URL"
    )
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
        // Shaped like URLs or credentials: never taken for a path (which would be printed).
        for nearURL in ["jdbc:postgresql://u:S3cretDbPw@db/x", "postgres:/u:S3cretDbPw@db/x", " postgres://u:S3cretDbPw@db/x"] {
            let problem = try #require(SQLStore.locationProblem(nearURL), "\(nearURL)")
            #expect(!problem.contains("S3cret"))
        }
        #expect(SQLStore.locationProblem("/var/lib/signet@prod/signet.sqlite") == nil, "an @ in a path is fine")
        #expect(SQLStore.urlHasPassword("postgres://u:S3c#ret/x@db/signet"), "a password URLComponents cannot parse")
        #expect(SQLStore.urlHasPassword("postgres://u:pw@db/signet"))
        #expect(!SQLStore.urlHasPassword("postgres://u@db/signet"))
        #expect(!SQLStore.urlHasPassword("postgres://db:5432/signet"))
        // Printed without the password, even where URLComponents reads it as a port, and without the query.
        #expect(SQLStore.redactedURL("postgres://signet:123/Sekr3t@127.0.0.1:1/signet") == "postgres://signet:****@127.0.0.1:1/signet")
        #expect(SQLStore.redactedURL("postgres://signet:4242?Sekr3t@db/signet") == "postgres://signet:****@db/signet")
        #expect(SQLStore.redactedURL("postgres://signet@db/signet?password=Sekr3t") == "postgres://signet@db/signet?…")
        #expect(SQLStore.redactedURL("postgres://db/signet") == "postgres://db/signet")
        // An @ in the query with no credentials is fine, and a printed URL never shows what precedes an @.
        for fine in [
            "postgres://db.example/signet?application_name=a@b", "postgres://[::1]/db?options=x@y", "postgres://u:pw@db:5432/signet?sslmode=require",
        ] {
            #expect(SQLStore.locationProblem(fine) == nil, "\(fine)")
        }
        #expect(!SQLStore.redactedURL("postgres://h/db?password=secret@x").contains("secret"))
        // User information that cannot be told from the host for sure is refused, never shown.
        for unreadable in ["postgres://u@127.0.0.1:1/db?application_name=a@b&password=zz", "postgres://u:p@ss#w/rd@db/signet"] {
            let problem = try #require(SQLStore.locationProblem(unreadable), "\(unreadable)")
            #expect(!problem.contains("zz") && !problem.contains("ss#w"))
        }
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
