// `signet serve`: run the provider.
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SignetServer
import SignetStorage

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the identity provider (SQLite in the data folder by default; seeds demo data on first start).")

    @OptionGroup var store: StoreOptions
    @OptionGroup var provider: ProviderOptions

    @Option(help: "Address to listen on (env SIGNET_HOST). Default 127.0.0.1")
    var host: String?

    @Option(help: "Port to listen on (env SIGNET_PORT). Default 8080")
    var port: Int?

    @Option(help: "PEM certificate chain for TLS (env SIGNET_TLS_CERTIFICATE).")
    var tlsCertificate: String?

    @Option(help: "PEM private key for TLS (env SIGNET_TLS_KEY).")
    var tlsKey: String?

    @Flag(help: "Do not seed demo clients and a demo user into an empty store.")
    var noDemo = false

    @Flag(help: "Seed demo data even when not listening on loopback (development machines only). Without it, demo data is seeded only on loopback.")
    var demo = false

    @Option(
        name: .customLong("trusted-proxy"),
        help: "A proxy (IP or CIDR) whose Forwarded / X-Forwarded-For headers name the client; repeatable (env SIGNET_TRUSTED_PROXIES, comma-separated).")
    var trustedProxies: [String] = []

    @Flag(name: .customLong("dpop-nonce"), help: "Make DPoP proofs carry a server-provided nonce (RFC 9449 §8; env SIGNET_DPOP_NONCE=1).")
    var dpopNonce = false

    @Flag(name: .customLong("require-par"), help: "Accept authorization requests only through the PAR endpoint, from every client (RFC 9126; env SIGNET_REQUIRE_PAR=1).")
    var requirePAR = false

    @Option(help: "The header the trusted proxies name the client in: x-forwarded-for or forwarded (env SIGNET_FORWARDED_HEADER). Default x-forwarded-for")
    var forwardedHeader: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (env SIGNET_LOG_LEVEL). Default info")
    var logLevel: String?

    @Option(help: "Send SMS through this gateway webhook (JSON POST signed with HMAC) instead of the development outbox (env SIGNET_SMS_WEBHOOK_URL).")
    var smsWebhookURL: String?

    @Option(help: "The webhook's HMAC signing secret (env SIGNET_SMS_WEBHOOK_SECRET).")
    var smsWebhookSecret: String?

    func run() async throws {
        let host = host ?? Environment.value("HOST") ?? "127.0.0.1"
        let port = try port ?? Environment.value("PORT").map { text in
            guard let value = Int(text) else { throw ValidationError("SIGNET_PORT must be a number, got '\(text)'") }
            return value
        } ?? 8080
        var configuration = try provider.configuration(host: host, port: port)
        configuration.tlsCertificatePath = tlsCertificate ?? Environment.value("TLS_CERTIFICATE")
        configuration.tlsKeyPath = tlsKey ?? Environment.value("TLS_KEY")
        if configuration.tlsCertificatePath != nil, provider.issuer == nil, Environment.value("ISSUER") == nil {
            configuration.issuer = configuration.issuer.replacingOccurrences(of: "http://", with: "https://")
        }
        configuration.trustedProxies = try trustedProxyNetworks()
        configuration.dpopNonces = dpopNonce || Environment.isSet("DPOP_NONCE")
        configuration.requirePushedAuthorizationRequests = requirePAR || Environment.isSet("REQUIRE_PAR")
        let headerName = (forwardedHeader ?? Environment.value("FORWARDED_HEADER") ?? "x-forwarded-for").lowercased()
        guard let header = ForwardedHeader(rawValue: headerName) else {
            throw ValidationError("--forwarded-header must be x-forwarded-for or forwarded, got '\(headerName)'")
        }
        configuration.forwardedHeader = header
        let problems = configuration.problems()
        guard problems.isEmpty else { throw ValidationError(problems.joined(separator: "\n")) }
        let levelText = logLevel ?? Environment.value("LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: levelText) else { throw ValidationError("unknown log level '\(levelText)'") }
        var logger = Logger(label: "signet")
        logger.logLevel = level

        let store = try await self.store.openStore(logger: logger)
        let admin = SignetAdmin(store: store, passwordHashCost: configuration.passwordHashCost)
        // Demo data (a known user, clients with published keys) only where nobody else can reach
        // it: a loopback listener with a loopback issuer and no proxy in front, or --demo.
        if demo, noDemo { throw ValidationError("--demo and --no-demo contradict each other") }
        let privateDevelopment = SignetConfiguration.isLoopback(host) && configuration.trustedProxies.isEmpty
            && (URL(string: configuration.issuer)?.host.map(SignetConfiguration.isLoopback) ?? false)
        let demoMode = !noDemo && (demo || privateDevelopment)
        var seed: DemoSeed?
        var firstStart = false
        if demoMode {
            if let fresh = try await DemoSeed.seedIfEmpty(admin: admin, issuer: configuration.issuer, dataDirectory: self.store.dataURL) {
                (seed, firstStart) = (fresh, true)
            } else {
                seed = try? DemoSeed.load(dataDirectory: self.store.dataURL)
            }
        }
        let (finalConfiguration, finalSeed, database, dataURL, showPassword) = (configuration, seed, self.store.databaseDescription, self.store.dataURL, firstStart)
        // SMS codes are printed only in private development, never where others could read the log.
        let messages = try messageSender(printing: demoMode && privateDevelopment)
        let application = try await buildApplication(configuration: configuration, store: store, logger: logger, messageSender: messages) { boundPort in
            Banner.print(configuration: finalConfiguration, database: database, seed: finalSeed, showPassword: showPassword, dataDirectory: dataURL, port: boundPort)
        }
        let services = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await services.run()
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }
}

extension Serve {
    /// `--trusted-proxy` values, or `SIGNET_TRUSTED_PROXIES` (comma or space separated).
    func trustedProxyNetworks() throws -> [IPNetwork] {
        let texts = trustedProxies.isEmpty
            ? (Environment.value("TRUSTED_PROXIES") ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) : trustedProxies
        return try texts.map { text in
            guard let network = IPNetwork(text) else { throw ValidationError("--trusted-proxy \(text) is not an IP address or a CIDR network") }
            return network
        }
    }

    /// The webhook sender when configured; otherwise the development outbox in the data folder,
    /// which in demo mode (only) also prints each message so the demo can be followed.
    func messageSender(printing: Bool) throws -> any MessageSender {
        if let url = smsWebhookURL ?? Environment.value("SMS_WEBHOOK_URL") {
            guard let secret = smsWebhookSecret ?? Environment.value("SMS_WEBHOOK_SECRET"), secret.utf8.count >= 16 else {
                throw ValidationError("--sms-webhook-url needs --sms-webhook-secret (at least 16 characters)")
            }
            guard let host = URL(string: url)?.host, url.lowercased().hasPrefix("https://") || SignetConfiguration.isLoopback(host) else {
                throw ValidationError("--sms-webhook-url must be https (http only on loopback)")
            }
            return WebhookMessageSender(url: url, secret: secret)
        }
        return DevelopmentOutbox(dataDirectory: store.dataURL) { message in
            guard printing else { return }
            FileHandle.standardOutput.write(Data("[outbox] to \(message.to): \(message.body.replacingOccurrences(of: "\n", with: " "))\n".utf8))
        }
    }
}

/// What `signet serve` prints once it listens.
enum Banner {
    /// The demo password is printed on the first start only; later starts point to `demo.json`.
    static func print(configuration: SignetConfiguration, database: String, seed: DemoSeed?, showPassword: Bool, dataDirectory: URL, port: Int) {
        var lines = [
            "Signet identity provider is listening on \(configuration.tlsCertificatePath == nil ? "http" : "https")://\(configuration.host):\(port)",
            "  issuer      \(configuration.issuer)",
            "  discovery   \(configuration.issuer)/.well-known/openid-configuration",
            "  database    \(database)",
            "  bcrypt cost \(configuration.passwordHashCost)",
        ]
        if !configuration.trustedProxies.isEmpty {
            lines.append("  proxies     client addresses from \(configuration.forwardedHeader.rawValue) of \(configuration.trustedProxies.map(\.description).joined(separator: ", "))")
        }
        if let seed {
            lines += [
                "Demo data:",
                "  app client      \(seed.nativeClientID) (public, PKCE; redirect \(seed.nativeRedirectURI))",
                "  service client  \(seed.backendClientID) (private_key_jwt; key \(seed.backendPrivateJWKPath))",
            ]
            if let bank = seed.fapiClientID { lines.append("  FAPI 2.0 client \(bank) (PAR, DPoP, private_key_jwt with the same key; API \(seed.fapiResource ?? ""))") }
            lines += [
                showPassword
                    ? "  user            \(seed.username) / \(seed.password)   (shown once; also in \(dataDirectory.appendingPathComponent("demo.json").path))"
                    : "  user            \(seed.username) (password in \(dataDirectory.appendingPathComponent("demo.json").path))",
                "Try it: swift run signet demo   (or: demo --native, demo --fapi)",
            ]
        }
        // One write, so the banner arrives whole even when stdout is a pipe.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
