// `signet config check`: the effective configuration, each value's source, secrets redacted.
import ArgumentParser
import Foundation

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Check the configuration serve would run with.", subcommands: [Check.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the effective configuration and where each value comes from (secrets redacted); exit 1 on any error.")
        @OptionGroup var serve: Serve

        func run() async throws {
            let settings: Settings
            do {
                settings = try await serve.store.settings(adding: serve.flagValues)
                let configuration = try ServeSettings.configuration(settings)
                // The same checks serve makes before it listens (TLS or proxies off loopback, the issuer, where SMS go).
                let problems = configuration.problems()
                guard problems.isEmpty else { throw SettingsError(problems: problems) }
                _ = try ServeSettings.smsDelivery(settings, configuration: configuration)
                _ = try ServeSettings.logging(settings)
                _ = try ServeSettings.adminListener(settings, publicPort: settings.integer(.port) ?? 8080)
            } catch let error as SettingsError {
                FileHandle.standardError.write(Data((error.description + "\n").utf8))
                throw ExitCode.failure
            }
            print(settings.report())
            print("configuration is valid")
        }
    }
}
