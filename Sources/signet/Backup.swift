// `signet backup` and `signet restore`: a consistent copy of the SQLite store, and putting one back.
import ArgumentParser
import Foundation
import SignetStorage

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the SQLite store consistently, even while `signet serve` runs (PostgreSQL: use pg_dump).")
    @OptionGroup var store: StoreOptions
    @Option(help: "The file to write (must not exist); made readable by its owner only.") var to: String

    func run() async throws {
        let target = URL(fileURLWithPath: to).standardizedFileURL.path
        let location = try await store.location()
        // A mistyped --data-dir must not back up a store made for the occasion.
        if let path = SQLStore.sqlitePath(of: location.databaseLocation), !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("there is no store at \(path)")
        }
        // A store of any version is copied as it is: a backup never migrates the store it copies.
        let opened = try await location.openStore(migrations: .asItIs)
        do { try await opened.backup(to: target) } catch {
            try? await opened.close()
            throw error
        }
        try? await opened.close()
        print("Backed up \(location.databaseDescription) to \(target).")
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put a backup back as the SQLite store of --data-dir (the server stopped, no store there yet).")
    @OptionGroup var store: StoreOptions
    @Option(help: "The backup made by `signet backup`.") var from: String

    func run() async throws {
        let location = try await store.location()
        guard let destination = SQLStore.sqlitePath(of: location.databaseLocation) else {
            throw ValidationError("restore a PostgreSQL store with pg_restore or psql")
        }
        try FileManager.default.createDirectory(at: location.dataURL, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try await SQLStore.restore(from: URL(fileURLWithPath: from).standardizedFileURL.path, to: destination)
        print("Restored \(from) as \(location.databaseDescription).")
    }
}
