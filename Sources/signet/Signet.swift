// The `signet` command: serve, administer and demonstrate the identity provider.
import ArgumentParser
import SignetCore

@main
struct Signet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signet",
        abstract: "Signet: a self-hosted OpenID Connect provider for mobile apps.",
        discussion: "Settings come from flags, then SIGNET_… environment variables, then a YAML or JSON file (--config or SIGNET_CONFIG); see docs/configuration.md and `signet config check`.",
        version: SignetVersion.current,
        subcommands: [Serve.self, Demo.self, Clients.self, Users.self, Devices.self, DeviceApp.self, Authenticators.self, AuthenticatorApp.self, Keys.self, DeviceCA.self, Outbox.self, Backup.self, Restore.self, Audit.self, ConfigCommand.self, Bench.self]
    )
}
