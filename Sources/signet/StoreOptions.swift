// Where the data lives: options shared by every command that opens the store.
import ArgumentParser
import Foundation
import Logging
import SignetServer
import SignetStorage

/// Reads a setting from the environment (`SIGNET_…`).
enum Environment {
    static func value(_ name: String) -> String? {
        ProcessInfo.processInfo.environment["SIGNET_" + name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the switch `SIGNET_<name>` is on (`1` or `true`).
    static func isSet(_ name: String) -> Bool { ["1", "true"].contains(value(name)?.lowercased() ?? "") }
}

/// `--data-dir` and `--database`.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Folder for the SQLite database, demo files and keys (env SIGNET_DATA_DIR). Default ./.signet")
    var dataDirectory: String?

    @Option(help: "A postgres:// URL to use PostgreSQL instead of SQLite in the data folder (env SIGNET_DATABASE).")
    var database: String?

    var dataURL: URL { URL(fileURLWithPath: dataDirectory ?? Environment.value("DATA_DIR") ?? ".signet") }

    var databaseLocation: String { database ?? Environment.value("DATABASE") ?? dataURL.appendingPathComponent("signet.sqlite").path }

    /// A description of the database for people, without any password.
    var databaseDescription: String {
        let location = databaseLocation
        guard location.hasPrefix("postgres"), var components = URLComponents(string: location) else { return "SQLite \(location)" }
        if components.password != nil { components.password = "****" }
        return "PostgreSQL \(components.string ?? "")"
    }

    /// Creates the data folder (owner-only) and opens the store.
    func openStore(logger: Logger = Logger(label: "signet.storage")) async throws -> SQLStore {
        try FileManager.default.createDirectory(at: dataURL, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            return try await SQLStore.open(databaseLocation, logger: logger)
        } catch {
            throw ValidationError("cannot open the database (\(databaseDescription)): \(error)")
        }
    }

    /// Runs `body` with the store open, closing it afterwards.
    func withStore<T>(_ body: (SQLStore) async throws -> T) async throws -> T {
        let store = try await openStore()
        do {
            let result = try await body(store)
            try? await store.close()
            return result
        } catch {
            try? await store.close()
            throw error
        }
    }
}

/// Options that shape the provider (used by `serve` and by admin commands that need lifetimes).
struct ProviderOptions: ParsableArguments {
    @Option(help: "Public URL of the provider, the `iss` of its tokens (env SIGNET_ISSUER). Default http://<host>:<port>")
    var issuer: String?

    @Option(help: "bcrypt cost for password hashes, 4–31 (env SIGNET_PASSWORD_HASH_COST). Default 12")
    var passwordHashCost: Int?

    @Option(help: "Wrong SMS codes allowed per account in 24 hours, across all its logins (env SIGNET_ACCOUNT_WRONG_CODE_LIMIT). Default 10")
    var accountWrongCodeLimit: Int?

    @Option(help: "SMS codes sent per account in an hour, across all its logins (env SIGNET_ACCOUNT_SEND_LIMIT). Default 10")
    var accountSendLimit: Int?

    func configuration(host: String = "127.0.0.1", port: Int = 8080) throws -> SignetConfiguration {
        let cost = try passwordHashCost ?? Environment.value("PASSWORD_HASH_COST").map {
            guard let value = Int($0) else { throw ValidationError("SIGNET_PASSWORD_HASH_COST must be a number") }
            return value
        } ?? 12
        let displayHost = host.contains(":") ? "[\(host)]" : host
        var configuration = SignetConfiguration(
            issuer: issuer ?? Environment.value("ISSUER") ?? "http://\(displayHost):\(port)", host: host, port: port, passwordHashCost: cost)
        configuration.sms.maxWrongCodesPerAccount = try Self.limit(accountWrongCodeLimit, "ACCOUNT_WRONG_CODE_LIMIT") ?? configuration.sms.maxWrongCodesPerAccount
        configuration.sms.maxSendsPerAccount = try Self.limit(accountSendLimit, "ACCOUNT_SEND_LIMIT") ?? configuration.sms.maxSendsPerAccount
        return configuration
    }

    /// A positive count from a flag or `SIGNET_<name>`.
    static func limit(_ flag: Int?, _ name: String) throws -> Int? {
        guard let value = try flag ?? Environment.value(name).map({ text in
            guard let value = Int(text) else { throw ValidationError("SIGNET_\(name) must be a number, got '\(text)'") }
            return value
        }) else { return nil }
        guard value >= 1 else { throw ValidationError("SIGNET_\(name) (--\(name.lowercased().replacingOccurrences(of: "_", with: "-"))) must be at least 1") }
        return value
    }
}
