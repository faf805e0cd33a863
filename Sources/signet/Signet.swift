// The `signet` command: serve, administer and demonstrate the identity provider.
import ArgumentParser
import SignetCore

@main
struct Signet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signet",
        abstract: "Signet: a self-hosted OpenID Connect provider for mobile apps.",
        discussion: "Every option can also be set with an environment variable named SIGNET_<OPTION> (e.g. SIGNET_PORT, SIGNET_DATABASE).",
        version: SignetVersion.current,
        subcommands: [Serve.self, Demo.self, Clients.self, Users.self, Devices.self, DeviceApp.self, Authenticators.self, AuthenticatorApp.self, Keys.self, DeviceCA.self, Outbox.self, Backup.self, Restore.self, Bench.self]
    )
}
