// Every setting Signet reads, in one table: the key in a configuration file, the flag, the
// environment variable, the type, the default and what it means. docs/configuration.md lists the
// same keys, and a test fails when the two differ.

/// One setting: its key in a configuration file (`tls.certificate`), its flag (`--tls-certificate`)
/// and its environment variable (`SIGNET_TLS_CERTIFICATE`).
struct SettingKey: Sendable, Hashable {
    /// How a value is written.
    enum Kind: String, Sendable {
        case string, integer, boolean, list, path
    }

    /// The dotted key of a configuration file; also the name `signet config check` prints.
    let key: String
    /// The command-line flag, when there is one (secrets have none: a flag shows in `ps`).
    let flag: String?
    let kind: Kind
    /// The default, as the documentation words it.
    let defaultDescription: String
    /// Secrets are redacted wherever they are printed, and may be read from a file (`…_FILE`).
    let isSecret: Bool
    /// What the setting does, for the documentation.
    let summary: String

    init(_ key: String, flag: String?, _ kind: Kind, default defaultDescription: String, secret: Bool = false, _ summary: String) {
        (self.key, self.flag, self.kind, self.defaultDescription, self.isSecret, self.summary) = (
            key, flag, kind, defaultDescription, secret, summary
        )
    }

    /// `SIGNET_` and the key with its dots and word boundaries as underscores, upper-cased — the
    /// name swift-configuration's environment provider looks up for the key.
    var environmentName: String {
        var name = "SIGNET_"
        var previous: Character?
        for character in key {
            if character == "." {
                name.append("_")
            } else {
                if character.isUppercase, let previous, previous.isLowercase || previous.isNumber { name.append("_") }
                name.append(contentsOf: character.uppercased())
            }
            previous = character
        }
        return name
    }

    /// For a secret, the key naming a file it is read from (`sms.webhookSecretFile`, `SIGNET_SMS_WEBHOOK_SECRET_FILE`).
    var fileKey: SettingKey? {
        guard isSecret else { return nil }
        return SettingKey(
            key + "File", flag: nil, .path, default: "none", "A file holding \(key) (as container secrets are mounted); not with \(key) itself.")
    }
}

extension SettingKey {
    static let host = SettingKey("host", flag: "--host", .string, default: "127.0.0.1", "Address the provider listens on.")
    static let port = SettingKey("port", flag: "--port", .integer, default: "8080", "Port the provider listens on; 0 picks a free one.")
    static let issuer = SettingKey(
        "issuer", flag: "--issuer", .string, default: "http://<host>:<port> (https with TLS)",
        "Public URL of the provider, the `iss` of its tokens. Required (https) when not on loopback.")
    static let dataDirectory = SettingKey(
        "dataDir", flag: "--data-dir", .path, default: "./.signet", "Folder for the SQLite database, demo files and development keys.")
    static let database = SettingKey(
        "database", flag: "--database", .string, default: "SQLite in dataDir", secret: true,
        "A postgres:// URL to use PostgreSQL instead of SQLite (secret: it may hold a password, though not in the flag).")
    static let databasePassword = SettingKey(
        "databasePassword", flag: nil, .string, default: "none", secret: true, "The PostgreSQL password, when it is not in the URL.")
    static let sqliteSynchronous = SettingKey(
        "sqlite.synchronous", flag: "--sqlite-synchronous", .string, default: "full",
        "full (no answer is given before the writes that bind it, such as a spent code or a counted failure, are on disk: one flush of the log per request, shared with concurrent ones) or normal (answers do not wait for the disk; each commit is flushed about 0.2 s after it is made, so a power loss may undo about that last moment of commits). See docs/operations.md."
    )
    static let tlsCertificate = SettingKey("tls.certificate", flag: "--tls-certificate", .path, default: "none", "PEM certificate chain for HTTPS.")
    static let tlsKey = SettingKey(
        "tls.key", flag: "--tls-key", .path, default: "none", "PEM private key for HTTPS (a file readable by the server only).")
    static let trustedProxies = SettingKey(
        "trustedProxies", flag: "--trusted-proxy", .list, default: "none",
        "Proxies (IP or CIDR) whose forwarding header names the client; a flag each, or comma-separated.")
    static let forwardedHeader = SettingKey(
        "forwardedHeader", flag: "--forwarded-header", .string, default: "x-forwarded-for",
        "The header trusted proxies name the client in: x-forwarded-for or forwarded.")
    static let clientCertificateHeader = SettingKey(
        "clientCertificateHeader", flag: "--client-certificate-header", .string, default: "none",
        "Behind a TLS-terminating proxy: the header a trusted proxy passes the client certificate in (URL-encoded PEM).")
    static let dpopNonce = SettingKey(
        "dpopNonce", flag: "--dpop-nonce", .boolean, default: "false", "Make DPoP proofs carry a server-provided nonce (RFC 9449 §8).")
    static let requirePAR = SettingKey(
        "requirePar", flag: "--require-par", .boolean, default: "false", "Accept authorization requests only through PAR (RFC 9126).")
    static let deviceCertificateDays = SettingKey(
        "deviceCertificateDays", flag: "--device-certificate-days", .integer, default: "90", "Days a device client certificate is valid, 1–825.")
    static let passwordHashCost = SettingKey(
        "passwordHashCost", flag: "--password-hash-cost", .integer, default: "12", "bcrypt cost for password hashes, 4–31.")
    static let accountWrongCodeLimit = SettingKey(
        "accountWrongCodeLimit", flag: "--account-wrong-code-limit", .integer, default: "10", "Wrong SMS codes allowed per account in 24 hours.")
    static let accountSendLimit = SettingKey(
        "accountSendLimit", flag: "--account-send-limit", .integer, default: "10", "SMS codes sent per account in an hour.")
    static let smsWebhookURL = SettingKey(
        "sms.webhookUrl", flag: "--sms-webhook-url", .string, default: "none (development outbox on loopback; required elsewhere, see sms.outbox)",
        "Send SMS through this gateway webhook (JSON POST signed with HMAC).")
    static let smsOutbox = SettingKey(
        "sms.outbox", flag: "--sms-outbox", .boolean, default: "true on loopback without sms.webhookUrl, else false",
        "Write SMS to the development outbox in the data folder (`signet outbox`) instead of sending them. Off loopback serve refuses to start without sms.webhookUrl unless this is true; false (`--no-sms-outbox`) refuses the outbox everywhere."
    )
    static let smsWebhookSecret = SettingKey(
        "sms.webhookSecret", flag: nil, .string, default: "none", secret: true, "The webhook's HMAC signing secret, at least 16 bytes.")
    static let accessTokenLifetime = SettingKey(
        "tokens.accessTokenLifetime", flag: "--access-token-lifetime", .integer, default: "600",
        "Seconds an access token lives, 60–86400; a client may have its own (`clients update --access-token-lifetime`).")
    static let idTokenLifetime = SettingKey(
        "tokens.idTokenLifetime", flag: "--id-token-lifetime", .integer, default: "600",
        "Seconds an ID token lives, 60–86400; a client may have its own.")
    static let refreshTokenIdleLifetime = SettingKey(
        "tokens.refreshTokenIdleLifetime", flag: "--refresh-token-idle-lifetime", .integer, default: "2592000 (30 days)",
        "Seconds a refresh token may go unused before it expires, 60–31536000, at most the absolute lifetime; a client may have its own.")
    static let refreshTokenAbsoluteLifetime = SettingKey(
        "tokens.refreshTokenAbsoluteLifetime", flag: "--refresh-token-absolute-lifetime", .integer, default: "7776000 (90 days)",
        "Seconds a grant's refresh tokens last however often refreshed (then the user signs in again), 60–315360000; a client may have its own.")
    static let codeLifetime = SettingKey(
        "tokens.codeLifetime", flag: "--code-lifetime", .integer, default: "60",
        "Seconds an authorization code lives, 10–60; a client may have its own.")
    static let keyRotationDays = SettingKey(
        "keys.rotationDays", flag: "--key-rotation-days", .integer, default: "90",
        "Days a signing key signs before the next takes over, 1–3650; 0 rotates only by hand (`signet keys rotate`).")
    static let keyAnnounceDays = SettingKey(
        "keys.announceDays", flag: "--key-announce-days", .integer, default: "7",
        "Days a new signing key is published in the JWKS before it signs, 0–365 (a rotation waits for it).")
    static let logLevel = SettingKey(
        "log.level", flag: "--log-level", .string, default: "info", "trace, debug, info, notice, warning, error or critical.")
    static let logFormat = SettingKey(
        "log.format", flag: "--log-format", .string, default: "text on a terminal, json otherwise", "json (one object a line) or text.")
    static let adminHost = SettingKey(
        "admin.host", flag: "--admin-host", .string, default: "127.0.0.1", "Address of the admin listener (metrics, admin API).")
    static let adminPort = SettingKey(
        "admin.port", flag: "--admin-port", .integer, default: "none (no admin listener)", "Port of the admin listener; never the public port.")
    static let adminToken = SettingKey(
        "admin.token", flag: nil, .string, default: "none (admin API off)", secret: true,
        "Bearer token of the admin API, at least 32 characters. /metrics needs none.")
    static let shutdownGracePeriod = SettingKey(
        "shutdown.gracePeriod", flag: "--shutdown-grace-period", .integer, default: "10", "Seconds requests in flight get to finish after SIGTERM.")
    static let auditRetentionDays = SettingKey(
        "audit.retentionDays", flag: "--audit-retention-days", .integer, default: "365", "Days audit events are kept.")

    /// Every setting, in the order the documentation lists them.
    static let all: [SettingKey] = [
        .host, .port, .issuer, .dataDirectory, .database, .databasePassword, .sqliteSynchronous, .tlsCertificate, .tlsKey, .trustedProxies,
        .forwardedHeader,
        .clientCertificateHeader, .dpopNonce, .requirePAR, .deviceCertificateDays, .passwordHashCost, .accountWrongCodeLimit, .accountSendLimit,
        .smsWebhookURL, .smsWebhookSecret, .smsOutbox, .accessTokenLifetime, .idTokenLifetime, .refreshTokenIdleLifetime,
        .refreshTokenAbsoluteLifetime,
        .codeLifetime, .keyRotationDays, .keyAnnounceDays, .logLevel, .logFormat, .adminHost, .adminPort, .adminToken, .shutdownGracePeriod,
        .auditRetentionDays,
    ]

    /// Every key a file or the environment may name: the settings and their secrets' file keys.
    static let accepted: [SettingKey] = all + all.compactMap(\.fileKey)

    /// Variables with the `SIGNET_` prefix that are not settings: the configuration file itself,
    /// and the prefixes of the test and development scripts.
    static let otherEnvironmentNames: Set<String> = ["SIGNET_CONFIG"]
    static let otherEnvironmentPrefixes = ["SIGNET_TEST_", "SIGNET_PG_"]
}
