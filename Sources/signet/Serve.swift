// `signet serve`: run the provider.
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SignetCore
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

    @Flag(
        name: .customLong("dev-tls"),
        help:
            "Serve HTTPS on loopback with a development certificate made in the data folder (dev-tls/ca.pem is its CA): to try mutual TLS and devices (`signet demo --device`). Not with --tls-certificate."
    )
    var developmentTLS = false

    @Flag(help: "Do not seed demo clients and a demo user into an empty store.")
    var noDemo = false

    @Flag(help: "Seed demo data even when not listening on loopback (development machines only). Without it, demo data is seeded only on loopback.")
    var demo = false

    @Option(
        name: .customLong("trusted-proxy"),
        help:
            "A proxy (IP or CIDR) whose Forwarded / X-Forwarded-For headers name the client; repeatable (env SIGNET_TRUSTED_PROXIES, comma-separated)."
    )
    var trustedProxies: [String] = []

    @Flag(name: .customLong("dpop-nonce"), help: "Make DPoP proofs carry a server-provided nonce (RFC 9449 §8; env SIGNET_DPOP_NONCE=1).")
    var dpopNonce = false

    @Flag(
        name: .customLong("require-par"),
        help: "Accept authorization requests only through the PAR endpoint, from every client (RFC 9126; env SIGNET_REQUIRE_PAR=1).")
    var requirePAR = false

    @Option(
        help: "The header the trusted proxies name the client in: x-forwarded-for or forwarded (env SIGNET_FORWARDED_HEADER). Default x-forwarded-for"
    )
    var forwardedHeader: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (env SIGNET_LOG_LEVEL). Default info")
    var logLevel: String?

    @Option(
        help:
            "SQLite commits: full (answers wait for the fsync) or normal (flushed about 0.2 s later; a power loss may undo about the last 0.2 s) (env SIGNET_SQLITE_SYNCHRONOUS). Default full"
    )
    var sqliteSynchronous: String?

    @Option(help: "Log format: json (a JSON object a line) or text (env SIGNET_LOG_FORMAT). Default text on a terminal, json otherwise")
    var logFormat: String?

    @Option(help: "Address of the admin listener: /metrics and the admin API (env SIGNET_ADMIN_HOST). Default 127.0.0.1")
    var adminHost: String?

    @Option(help: "Port of the admin listener (env SIGNET_ADMIN_PORT). Default none: no admin listener")
    var adminPort: Int?

    @Option(help: "Seconds requests in flight get to finish after SIGTERM or SIGINT (env SIGNET_SHUTDOWN_GRACE_PERIOD). Default 10")
    var shutdownGracePeriod: Int?

    @Option(help: "Days audit events are kept (env SIGNET_AUDIT_RETENTION_DAYS). Default 365")
    var auditRetentionDays: Int?

    @Option(
        help: "Send SMS through this gateway webhook (JSON POST signed with HMAC) instead of the development outbox (env SIGNET_SMS_WEBHOOK_URL).")
    var smsWebhookURL: String?

    @Flag(
        name: .customLong("sms-outbox"), inversion: .prefixedNo,
        help:
            "Write SMS to the development outbox in the data folder instead of sending them; needed off loopback without --sms-webhook-url (env SIGNET_SMS_OUTBOX). Default: on loopback only"
    )
    var smsOutbox: Bool?

    @Option(
        help:
            "Behind a TLS-terminating proxy: the header a --trusted-proxy passes the client certificate in, URL-encoded PEM as nginx's $ssl_client_escaped_cert (env SIGNET_CLIENT_CERTIFICATE_HEADER)."
    )
    var clientCertificateHeader: String?

    @Option(help: "Days a device client certificate is valid (env SIGNET_DEVICE_CERTIFICATE_DAYS). Default 90")
    var deviceCertificateDays: Int?

    @Option(help: "Seconds an access token lives, 60–86400 (env SIGNET_TOKENS_ACCESS_TOKEN_LIFETIME). Default 600")
    var accessTokenLifetime: Int?

    @Option(help: "Seconds an ID token lives, 60–86400 (env SIGNET_TOKENS_ID_TOKEN_LIFETIME). Default 600")
    var idTokenLifetime: Int?

    @Option(help: "Seconds a refresh token may go unused, 60–31536000 (env SIGNET_TOKENS_REFRESH_TOKEN_IDLE_LIFETIME). Default 2592000 (30 days)")
    var refreshTokenIdleLifetime: Int?

    @Option(
        help:
            "Seconds a grant's refresh tokens last in all, 60–315360000 (env SIGNET_TOKENS_REFRESH_TOKEN_ABSOLUTE_LIFETIME). Default 7776000 (90 days)"
    )
    var refreshTokenAbsoluteLifetime: Int?

    @Option(help: "Seconds an authorization code lives, 10–60 (env SIGNET_TOKENS_CODE_LIFETIME). Default 60")
    var codeLifetime: Int?

    @Option(help: "Days a signing key signs before the next takes over, 1–3650, 0 for by hand only (env SIGNET_KEYS_ROTATION_DAYS). Default 90")
    var keyRotationDays: Int?

    @Option(help: "Days a new signing key is published before it signs, 0–365 (env SIGNET_KEYS_ANNOUNCE_DAYS). Default 7")
    var keyAnnounceDays: Int?

    /// The values given as flags to `serve` (store and provider flags included).
    var flagValues: [SettingKey: SettingValue] {
        var values = provider.flagValues
        values[.host] = host.map(SettingValue.string)
        values[.port] = port.map(SettingValue.integer)
        values[.tlsCertificate] = tlsCertificate.map(SettingValue.string)
        values[.tlsKey] = tlsKey.map(SettingValue.string)
        values[.trustedProxies] = trustedProxies.isEmpty ? nil : .list(trustedProxies)
        values[.dpopNonce] = dpopNonce ? .boolean(true) : nil
        values[.requirePAR] = requirePAR ? .boolean(true) : nil
        values[.forwardedHeader] = forwardedHeader.map(SettingValue.string)
        values[.logLevel] = logLevel.map(SettingValue.string)
        values[.sqliteSynchronous] = sqliteSynchronous.map(SettingValue.string)
        values[.logFormat] = logFormat.map(SettingValue.string)
        values[.smsWebhookURL] = smsWebhookURL.map(SettingValue.string)
        values[.smsOutbox] = smsOutbox.map(SettingValue.boolean)
        values[.clientCertificateHeader] = clientCertificateHeader.map(SettingValue.string)
        values[.deviceCertificateDays] = deviceCertificateDays.map(SettingValue.integer)
        values[.adminHost] = adminHost.map(SettingValue.string)
        values[.adminPort] = adminPort.map(SettingValue.integer)
        values[.shutdownGracePeriod] = shutdownGracePeriod.map(SettingValue.integer)
        values[.auditRetentionDays] = auditRetentionDays.map(SettingValue.integer)
        values[.accessTokenLifetime] = accessTokenLifetime.map(SettingValue.integer)
        values[.idTokenLifetime] = idTokenLifetime.map(SettingValue.integer)
        values[.refreshTokenIdleLifetime] = refreshTokenIdleLifetime.map(SettingValue.integer)
        values[.refreshTokenAbsoluteLifetime] = refreshTokenAbsoluteLifetime.map(SettingValue.integer)
        values[.codeLifetime] = codeLifetime.map(SettingValue.integer)
        values[.keyRotationDays] = keyRotationDays.map(SettingValue.integer)
        values[.keyAnnounceDays] = keyAnnounceDays.map(SettingValue.integer)
        return values
    }

    func run() async throws {
        let settings = try await store.settings(adding: flagValues)
        let location = StoreLocation(settings: settings)
        var configuration = try ServeSettings.configuration(settings)
        if developmentTLS {
            guard configuration.tlsCertificatePath == nil, configuration.tlsKeyPath == nil else {
                throw ValidationError("--dev-tls makes its own certificate: leave out --tls-certificate and --tls-key (tls.certificate, tls.key)")
            }
            guard Loopback.isHost(configuration.host) else {
                throw ValidationError("--dev-tls is for loopback only (--host 127.0.0.1, ::1 or localhost)")
            }
            let files = try DevelopmentTLS.prepare(dataDirectory: location.dataURL)
            configuration.tlsCertificatePath = files.certificatePath
            configuration.tlsKeyPath = files.keyPath
            if !settings.isSet(.issuer) { configuration.issuer = configuration.issuer.replacingOccurrences(of: "http://", with: "https://") }
        }
        let problems = configuration.problems()
        guard problems.isEmpty else { throw ValidationError(problems.joined(separator: "\n")) }
        let smsDelivery = try ServeSettings.smsDelivery(settings, configuration: configuration)
        let logging = try ServeSettings.logging(settings)
        let logger = logging.makeLogger(label: "signet")
        AllocatorTuning.log(AllocatorTuning.atStart, to: logger)

        if smsDelivery == .outbox(explicit: true), !ServeSettings.isPrivateDevelopment(configuration) {
            logger.warning(
                "SMS codes go to the development outbox in the data folder (sms.outbox), not to phones",
                metadata: ["event": "sms.outbox_in_use"])
        }
        let store = try await location.openStore(migrations: .upgrade, logger: logger)
        do {
            try await run(store: store, location: location, settings: settings, configuration: configuration, logger: logger)
        } catch {
            // Whatever failed (the demo seed, TLS files, the listener), the store is closed before the error is told.
            try? await store.close()
            throw error
        }
        try await store.close()
    }

    /// Seeds the demo when it should, builds the application and runs it until a signal stops it.
    private func run(store: SQLStore, location: StoreLocation, settings: Settings, configuration: SignetConfiguration, logger: Logger) async throws {
        let seeder = SignetAdmin(store: store, passwordHashCost: configuration.passwordHashCost, logger: logger)
        // Demo data (a known user, clients with published keys) only where nobody else can reach
        // it: a loopback listener with a loopback issuer and no proxy in front, or --demo.
        if demo, noDemo { throw ValidationError("--demo and --no-demo contradict each other") }
        let privateDevelopment = ServeSettings.isPrivateDevelopment(configuration)
        let demoMode = !noDemo && (demo || privateDevelopment)
        var seed: DemoSeed?
        var firstStart = false
        if demoMode {
            if let fresh = try await DemoSeed.seedIfEmpty(admin: seeder, issuer: configuration.issuer, dataDirectory: location.dataURL) {
                (seed, firstStart) = (fresh, true)
            } else {
                seed = try? DemoSeed.load(dataDirectory: location.dataURL)
                // demo.json names the issuer the demo commands talk to: the one served now.
                if var kept = seed, kept.issuer != configuration.issuer {
                    kept.issuer = configuration.issuer
                    try kept.save(dataDirectory: location.dataURL)
                    seed = kept
                }
            }
        }
        let (finalConfiguration, finalSeed, database, dataURL, showPassword) = (
            configuration, seed, location.databaseDescription, location.dataURL, firstStart
        )
        // SMS codes are printed only in private development, never where others could read the log.
        let messages = try MessageSenders.configured(
            webhookURL: settings.string(.smsWebhookURL), webhookSecret: settings.string(.smsWebhookSecret), dataDirectory: location.dataURL,
            printing: demoMode && privateDevelopment)
        let metrics = SignetMetrics()
        let admin = try ServeSettings.adminListener(settings, publicPort: configuration.port)
        let application = try await buildApplication(
            configuration: configuration, store: store, logger: logger, messageSender: messages, metrics: metrics
        ) {
            boundPort in
            Banner.print(
                configuration: finalConfiguration, database: database, seed: finalSeed, showPassword: showPassword, dataDirectory: dataURL,
                port: boundPort)
        }
        var services: [any Service] = [application]
        if let admin, !Loopback.isHost(admin.host) {
            logger.warning(
                "the admin listener is plain HTTP off loopback: keep it on a private network (its token and /metrics travel in clear)",
                metadata: ["admin_host": .string(admin.host)])
        }
        if let admin {
            services.append(
                buildAdminApplication(
                    metrics: metrics,
                    api: settings.string(.adminToken).map { AdminAPIAccess(admin: seeder, configuration: configuration, token: $0) },
                    host: admin.host, port: admin.port, logger: logger
                ) { port in
                    FileHandle.standardOutput.write(Data("  admin       http://\(admin.host):\(port)/metrics\n".utf8))
                })
        }
        services.append(
            AuditRetentionService(store: store, retention: TimeInterval(settings.integer(.auditRetentionDays) ?? 365) * 86_400, logger: logger))
        // SIGTERM or SIGINT: stop accepting, let requests in flight finish within the grace period, then close the store.
        var groupConfiguration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = ServeSettings.gracePeriod(settings)
        try await ServiceGroup(configuration: groupConfiguration).run()
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
            lines.append(
                "  proxies     client addresses from \(configuration.forwardedHeader.rawValue) of \(configuration.trustedProxies.map(\.description).joined(separator: ", "))"
            )
        }
        if configuration.tlsCertificatePath != nil {
            lines.append(
                "  devices     mutual TLS: client certificates asked for, never required (device CA at \(configuration.issuer)/devices/ca.pem)")
        } else if let header = configuration.clientCertificateHeader {
            lines.append("  devices     client certificates from the \(header) header of trusted proxies")
        }
        if let seed {
            lines += [
                "Demo data:",
                "  app client      \(seed.nativeClientID) (public, PKCE; redirect \(seed.nativeRedirectURI))",
                "  service client  \(seed.backendClientID) (private_key_jwt; key \(seed.backendPrivateJWKPath))",
            ]
            if let bank = seed.fapiClientID {
                lines.append("  FAPI 2.0 client \(bank) (PAR, DPoP, private_key_jwt with the same key; API \(seed.fapiResource ?? ""))")
            }
            lines += [
                showPassword
                    ? "  user            \(seed.username) / \(seed.password)   (shown once; also in \(dataDirectory.appendingPathComponent("demo.json").path))"
                    : "  user            \(seed.username) (password in \(dataDirectory.appendingPathComponent("demo.json").path))",
                configuration.tlsCertificatePath == nil
                    ? "Try it: swift run signet demo   (or: demo --native, demo --fapi; with serve --dev-tls: demo --device)"
                    : "Try it: swift run signet demo   (or: demo --native, demo --fapi, demo --device)",
            ]
        }
        // One write, so the banner arrives whole even when stdout is a pipe.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
