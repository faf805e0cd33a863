// The message sender the commands use: the SMS gateway webhook when configured, else the development outbox.
import ArgumentParser
import Foundation
import SignetCore
import SignetServer

enum MessageSenders {
    /// The webhook sender when a URL is configured (`sms.webhookUrl`); otherwise the development
    /// outbox in the data folder, which prints each message only when `printing`.
    static func configured(webhookURL: String?, webhookSecret: String?, dataDirectory: URL, printing: Bool) throws -> any MessageSender {
        if let url = webhookURL {
            guard let secret = webhookSecret, secret.utf8.count >= 16 else {
                throw ValidationError("sms.webhookUrl needs sms.webhookSecret (SIGNET_SMS_WEBHOOK_SECRET or its _FILE; at least 16 characters)")
            }
            guard let host = URL(string: url)?.host, url.lowercased().hasPrefix("https://") || Loopback.isHost(host) else {
                throw ValidationError("sms.webhookUrl must be https (http only on loopback)")
            }
            return WebhookMessageSender(url: url, secret: secret)
        }
        return DevelopmentOutbox(dataDirectory: dataDirectory) { message in
            guard printing else { return }
            FileHandle.standardOutput.write(Data("[outbox] to \(message.to): \(message.body.replacingOccurrences(of: "\n", with: " "))\n".utf8))
        }
    }
}
