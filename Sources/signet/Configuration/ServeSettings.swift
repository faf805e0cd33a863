// The settings `serve` runs with, turned into the provider's configuration, checked once at start.
import Foundation
import Logging
import SignetCore
import SignetServer
import SignetStorage

enum ServeSettings {
    /// The provider's configuration from the settings; every bad value names its key and source.
    static func configuration(_ settings: Settings) throws -> SignetConfiguration {
        let host = settings.string(.host) ?? "127.0.0.1"
        let port = settings.integer(.port) ?? 8080
        guard (0...65_535).contains(port) else { throw settings.invalid(.port, "must be 0–65535") }
        var configuration = try SignetConfiguration.provider(settings, host: host, port: port)
        configuration.tlsCertificatePath = settings.string(.tlsCertificate)
        configuration.tlsKeyPath = settings.string(.tlsKey)
        if configuration.tlsCertificatePath != nil, !settings.isSet(.issuer) {
            configuration.issuer = configuration.issuer.replacingOccurrences(of: "http://", with: "https://")
        }
        configuration.trustedProxies = try settings.list(.trustedProxies).map { text in
            guard let network = IPNetwork(text) else { throw settings.invalid(.trustedProxies, "'\(text)' is not an IP address or a CIDR network") }
            return network
        }
        configuration.dpopNonces = settings.boolean(.dpopNonce) ?? false
        configuration.requirePushedAuthorizationRequests = settings.boolean(.requirePAR) ?? false
        let headerName = (settings.string(.forwardedHeader) ?? "x-forwarded-for").lowercased()
        guard let header = ForwardedHeader(rawValue: headerName) else {
            throw settings.invalid(.forwardedHeader, "must be x-forwarded-for or forwarded, not '\(headerName)'")
        }
        configuration.forwardedHeader = header
        configuration.clientCertificateHeader = settings.string(.clientCertificateHeader)
        if let days = settings.integer(.deviceCertificateDays) {
            guard (1...825).contains(days) else { throw settings.invalid(.deviceCertificateDays, "must be 1–825") }
            configuration.deviceCertificateValidity = TimeInterval(days) * 86_400
            configuration.reactivationWindow = min(configuration.reactivationWindow, configuration.deviceCertificateValidity / 2)
        }
        if let cost = settings.integer(.passwordHashCost), !(4...31).contains(cost) {
            throw settings.invalid(.passwordHashCost, "must be 4–31")
        }
        if let mode = settings.string(.sqliteSynchronous), SQLStore.Synchronous(rawValue: mode.lowercased()) == nil {
            throw settings.invalid(.sqliteSynchronous, "must be normal or full, not '\(mode)'")
        }
        if let grace = settings.integer(.shutdownGracePeriod), !(0...3600).contains(grace) {
            throw settings.invalid(.shutdownGracePeriod, "must be 0–3600 seconds")
        }
        if let days = settings.integer(.auditRetentionDays), days < 1 {
            throw settings.invalid(.auditRetentionDays, "must be at least 1 day")
        }
        return configuration
    }

    /// Where `serve` sends SMS codes.
    enum SMSDelivery: Equatable {
        /// The gateway webhook (`sms.webhookUrl`).
        case webhook
        /// The development outbox in the data folder; `explicit` when `sms.outbox` asked for it.
        case outbox(explicit: Bool)
    }

    /// Where SMS codes go, or why serve must not start: the webhook when one is set; the
    /// development outbox on loopback, and elsewhere only when `sms.outbox` is true, so that no
    /// production server sends its users' codes to a file by default. Loopback means what it
    /// means for the demo data: a loopback listener, a loopback issuer and no trusted proxy.
    static func smsDelivery(_ settings: Settings, configuration: SignetConfiguration) throws -> SMSDelivery {
        let outbox = settings.boolean(.smsOutbox)
        if settings.string(.smsWebhookURL) != nil {
            guard outbox != true else {
                throw settings.invalid(
                    .smsOutbox, "is true, but sms.webhookUrl is set too: SMS go to the webhook or to the outbox, not both; leave one out")
            }
            return .webhook
        }
        if let outbox {
            guard outbox else {
                throw settings.invalid(
                    .smsWebhookURL,
                    "is not set, and sms.outbox is false: no SMS code could be sent. Set sms.webhookUrl (--sms-webhook-url, SIGNET_SMS_WEBHOOK_URL) and sms.webhookSecret"
                )
            }
            return .outbox(explicit: true)
        }
        guard isPrivateDevelopment(configuration) else {
            throw settings.invalid(
                .smsWebhookURL,
                "is not set, and this server is not on loopback: SMS codes would go to the development outbox in the data folder instead of to phones. "
                    + "Set sms.webhookUrl (--sms-webhook-url, SIGNET_SMS_WEBHOOK_URL) and sms.webhookSecret, "
                    + "or sms.outbox (--sms-outbox, SIGNET_SMS_OUTBOX=true) to keep the outbox knowingly")
        }
        return .outbox(explicit: false)
    }

    /// A server nobody else reaches: a loopback listener, a loopback issuer and no proxy in front.
    static func isPrivateDevelopment(_ configuration: SignetConfiguration) -> Bool {
        Loopback.isHost(configuration.host) && configuration.trustedProxies.isEmpty
            && (URL(string: configuration.issuer)?.host.map(Loopback.isHost) ?? false)
    }

    /// How `serve` logs: the level and the format.
    static func logging(_ settings: Settings, standardErrorIsTerminal: Bool = isatty(STDERR_FILENO) == 1) throws -> LogOutput {
        let levelText = settings.string(.logLevel) ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw settings.invalid(.logLevel, "must be trace, debug, info, notice, warning, error or critical, not '\(levelText)'")
        }
        let formatText = settings.string(.logFormat) ?? (standardErrorIsTerminal ? "text" : "json")
        guard let format = LogOutput.Format(rawValue: formatText.lowercased()) else {
            throw settings.invalid(.logFormat, "must be json or text, not '\(formatText)'")
        }
        return LogOutput(level: level, format: format)
    }

    /// The admin listener's address, when one is configured; never the public port.
    static func adminListener(_ settings: Settings, publicPort: Int) throws -> (host: String, port: Int)? {
        guard let port = settings.integer(.adminPort) else { return nil }
        guard (0...65_535).contains(port) else { throw settings.invalid(.adminPort, "must be 0–65535") }
        guard port == 0 || port != publicPort else { throw settings.invalid(.adminPort, "must not be the public port \(publicPort)") }
        if let token = settings.string(.adminToken), token.count < 32 || Set(token).count < 10 {
            throw settings.invalid(.adminToken, "must be at least 32 characters, with at least 10 different ones (e.g. openssl rand -hex 32)")
        }
        return (settings.string(.adminHost) ?? "127.0.0.1", port)
    }

    /// Seconds requests in flight get after SIGTERM.
    static func gracePeriod(_ settings: Settings) -> Duration { .seconds(settings.integer(.shutdownGracePeriod) ?? 10) }
}
