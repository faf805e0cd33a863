// Where the data lives: options shared by every command that opens the store.
import ArgumentParser
import Foundation
import Logging
import SignetServer
import SignetStorage

/// Reads a variable of the `signet` client commands' own (`SIGNET_…`), outside the server settings.
enum Environment {
    static func value(_ name: String) -> String? {
        ProcessInfo.processInfo.environment["SIGNET_" + name].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// `--config`, `--data-dir` and `--database`: every command that opens the store reads the same
/// configuration as `serve` (see docs/configuration.md).
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: "A YAML or JSON configuration file (env SIGNET_CONFIG); flags and SIGNET_… variables override it.")
    var configurationFile: String?

    @Option(name: .customLong("data-dir"), help: "Folder for the SQLite database, demo files and keys (env SIGNET_DATA_DIR). Default ./.signet")
    var dataDirectory: String?

    @Option(help: "A postgres:// URL to use PostgreSQL instead of SQLite in the data folder (env SIGNET_DATABASE).")
    var database: String?

    /// The values given as flags here.
    var flagValues: [SettingKey: SettingValue] {
        var values: [SettingKey: SettingValue] = [:]
        values[.dataDirectory] = dataDirectory.map(SettingValue.string)
        values[.database] = database.map(SettingValue.string)
        return values
    }

    /// The settings: these flags and `more`, over the environment, over the configuration file.
    func settings(adding more: [SettingKey: SettingValue] = [:]) async throws -> Settings {
        try await SettingsLoader(flags: flagValues.merging(more) { mine, _ in mine }, configurationPath: configurationFile).load()
    }

    /// Where the store is, from the settings.
    func location() async throws -> StoreLocation { StoreLocation(settings: try await settings()) }

    /// Runs `body` with the store open, closing it afterwards. An administrative command: it
    /// creates a new store's schema but refuses an older one, which only `signet serve` upgrades.
    func withStore<T>(_ body: (SQLStore) async throws -> T) async throws -> T {
        let store = try await location().openStore(migrations: .requireCurrent)
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

/// The data folder and the database the settings name.
struct StoreLocation: Sendable {
    let dataURL: URL
    /// A SQLite path or a postgres:// URL (with its password: never print it; see ``databaseDescription``).
    let databaseLocation: String
    /// `sqlite.synchronous`, checked.
    let synchronous: SQLStore.Synchronous?

    init(settings: Settings) {
        synchronous = SQLStore.Synchronous(rawValue: (settings.string(.sqliteSynchronous) ?? "full").lowercased())
        dataURL = URL(fileURLWithPath: settings.string(.dataDirectory) ?? ".signet")
        var location = settings.string(.database) ?? dataURL.appendingPathComponent("signet.sqlite").path
        if let password = settings.string(.databasePassword), SQLStore.sqlitePath(of: location) == nil,
            var components = URLComponents(string: location),
            components.password == nil
        {
            components.password = password
            location = components.string ?? location
        }
        databaseLocation = location
    }

    /// A description of the database for people, without any password.
    var databaseDescription: String {
        if let path = SQLStore.sqlitePath(of: databaseLocation) { return "SQLite \(path)" }
        if SQLStore.locationProblem(databaseLocation) != nil { return "an unsupported database location" }
        return "PostgreSQL \(SQLStore.redactedURL(databaseLocation))"
    }

    /// Creates the data folder (owner-only) and opens the store, migrating it as `migrations` says.
    func openStore(migrations: SQLStore.MigrationPolicy, logger: Logger = Logger(label: "signet.storage")) async throws -> SQLStore {
        try FileManager.default.createDirectory(at: dataURL, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard let synchronous else { throw ValidationError("sqlite.synchronous must be normal or full") }
        do {
            return try await SQLStore.open(databaseLocation, synchronous: synchronous, migrations: migrations, logger: logger)
        } catch {
            throw ValidationError("cannot open the database (\(databaseDescription)): \(error)")
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

    /// The values given as flags here.
    var flagValues: [SettingKey: SettingValue] {
        var values: [SettingKey: SettingValue] = [:]
        values[.issuer] = issuer.map(SettingValue.string)
        values[.passwordHashCost] = passwordHashCost.map(SettingValue.integer)
        values[.accountWrongCodeLimit] = accountWrongCodeLimit.map(SettingValue.integer)
        values[.accountSendLimit] = accountSendLimit.map(SettingValue.integer)
        return values
    }
}

extension SignetConfiguration {
    /// The provider's settings (issuer, password hashing, SMS limits) from the loaded settings.
    static func provider(_ settings: Settings, host: String = "127.0.0.1", port: Int = 8080) throws -> SignetConfiguration {
        let cost = settings.integer(.passwordHashCost) ?? 12
        let displayHost = host.contains(":") ? "[\(host)]" : host
        var configuration = SignetConfiguration(
            issuer: settings.string(.issuer) ?? "http://\(displayHost):\(port)", host: host, port: port, passwordHashCost: cost)
        configuration.sms.maxWrongCodesPerAccount = try settings.positive(.accountWrongCodeLimit) ?? configuration.sms.maxWrongCodesPerAccount
        configuration.sms.maxSendsPerAccount = try settings.positive(.accountSendLimit) ?? configuration.sms.maxSendsPerAccount
        try configuration.applyTokenLifetimes(settings)
        if let days = settings.integer(.keyRotationDays) {
            guard (0...3_650).contains(days) else { throw settings.invalid(.keyRotationDays, "must be 1–3650 days, or 0 to rotate only by hand") }
            configuration.keyRotation.rotationPeriod = days == 0 ? nil : TimeInterval(days) * 86_400
        }
        if let days = settings.integer(.keyAnnounceDays) {
            guard (0...365).contains(days) else { throw settings.invalid(.keyAnnounceDays, "must be 0–365 days") }
            configuration.keyRotation.announcement = TimeInterval(days) * 86_400
        }
        return configuration
    }
}

extension SignetConfiguration {
    /// The `tokens.…` settings, each within its bounds (``TokenLifetimes/limits``).
    mutating func applyTokenLifetimes(_ settings: Settings) throws {
        var lifetimes = tokenLifetimes
        let keys: [SettingKey] = [.accessTokenLifetime, .idTokenLifetime, .refreshTokenIdleLifetime, .refreshTokenAbsoluteLifetime, .codeLifetime]
        for key in keys {
            guard let seconds = settings.integer(key), let limit = TokenLifetimes.limits.first(where: { "tokens." + $0.name == key.key }) else {
                continue
            }
            guard limit.bounds.contains(TimeInterval(seconds)) else {
                throw settings.invalid(key, "must be \(Int(limit.bounds.lowerBound))–\(Int(limit.bounds.upperBound)) seconds, not \(seconds)")
            }
            lifetimes[keyPath: limit.keyPath] = TimeInterval(seconds)
        }
        if lifetimes.refreshTokenIdle > lifetimes.refreshTokenAbsolute {
            throw settings.invalid(
                .refreshTokenIdleLifetime, "must not be longer than tokens.refreshTokenAbsoluteLifetime (\(Int(lifetimes.refreshTokenAbsolute)) s)")
        }
        accessTokenLifetime = lifetimes.accessToken
        idTokenLifetime = lifetimes.idToken
        refreshTokenLifetime = lifetimes.refreshTokenIdle
        grantLifetime = lifetimes.refreshTokenAbsolute
        authorizationCodeLifetime = lifetimes.code
    }
}

extension Settings {
    /// A count that must be at least 1, with an error naming the key and its source.
    func positive(_ key: SettingKey) throws -> Int? {
        guard let value = integer(key) else { return nil }
        guard value >= 1 else { throw invalid(key, "must be at least 1") }
        return value
    }

    /// An error naming the key, where its value came from, and what is wrong.
    func invalid(_ key: SettingKey, _ problem: String) -> SettingsError {
        SettingsError(problems: ["\(key.key) (\(entry(key)?.source.description ?? "default")): \(problem)"])
    }
}
