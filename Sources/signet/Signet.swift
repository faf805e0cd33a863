// The `signet` command: serve, administer and demonstrate the identity provider.
import ArgumentParser
import SignetCore

@main
struct Signet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signet",
        abstract: "Signet: a self-hosted OpenID Connect provider for mobile apps.",
        discussion:
            "Settings come from flags, then SIGNET_… environment variables, then a YAML or JSON file (--config or SIGNET_CONFIG); see docs/configuration.md and `signet config check`.",
        version: SignetVersion.current,
        subcommands: [
            Serve.self, Demo.self, Clients.self, Users.self, Devices.self, DeviceApp.self, Authenticators.self, AuthenticatorApp.self, Keys.self,
            DeviceCA.self, Outbox.self, Backup.self, Restore.self, Audit.self, ConfigCommand.self,
        ]
    )

    /// Runs the command. `signet serve` first makes NIO's event loops Swift concurrency's global
    /// executor (``EventLoopGlobalExecutor``, before the server's tasks start), so a request's
    /// tasks run on the event loops instead of being handed to the standard thread pool and back
    /// (5 to 7 context switches per token request instead of 13, docs/performance.md).
    ///
    /// It also raises glibc's trim threshold (``AllocatorTuning``), so the memory a request frees
    /// is kept for the next instead of being given back to the kernel and faulted in again.
    ///
    /// Password hashing runs on NIO's thread pool and SQLite's flushes on their own thread. What
    /// still holds an event loop is SQLite's statements, short by design (purges go in batches);
    /// a write meeting another process's lock waits off the loop (docs/operations.md).
    static func main() async {
        if CommandLine.arguments.dropFirst().first == "serve" {
            AllocatorTuning.applyAtStart()
            EventLoopGlobalExecutor.install()
        }
        await main(nil)
    }
}
