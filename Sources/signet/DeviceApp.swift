// `signet device activate|status|reactivate|deactivate`: one app installation on Linux, its key sealed in a folder.
import ArgumentParser
import Foundation
import SignetClient
import SignetCore
import SignetScript
import SignetServer

struct DeviceApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract:
            "Play an app installation against a running `signet serve --dev-tls` (or any provider over TLS): activate, status, reactivate, deactivate.",
        discussion: """
            The installation keeps its P-256 key and certificate sealed (AES-GCM) in --folder, under a key read from \
            --sealing-key-file (made on first use). Issuer, client and user default to the demo in the server's data folder \
            (demo.json), and the server's development CA (dev-tls/ca.pem) is trusted. The logins are native logins with \
            the instance id as their nonce; an SMS code is read from the development outbox, or asked for.
            """,
        subcommands: [Activate.self, Status.self, Reactivate.self, Deactivate.self])

    struct Activate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Activate: an instance id, a login with it as the nonce, a key and its certificate.")
        @OptionGroup var options: InstallationOptions
        @Option(help: "What the user calls the device (at most 64 characters).") var name: String?

        func run() async throws {
            try await options.withInstallation { installation in
                if let current = try await installation.enrolment.credential() {
                    throw ValidationError(
                        "this folder already holds the certificate of \(current.instanceID ?? "an installation"); deactivate it first")
                }
                let device = try await installation.activate(name: name)
                print(
                    "Activated \(device.instanceID) for \(installation.username): certificate \(device.certificateSerial ?? "-") until \(device.certificateNotAfter.map(Self.date) ?? "-")."
                )
            }
        }

        static func date(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ask the provider, over mutual TLS, where this installation stands.")
        @OptionGroup var options: InstallationOptions

        func run() async throws {
            try await options.withInstallation { installation in
                let status = try await installation.enrolment.status()
                print(Self.describe(status))
                if case .activated = status { return }
                throw ExitCode(3)
            }
        }

        static func describe(_ status: DeviceStatus) -> String {
            switch status {
            case .notActivated: return "Not activated."
            case .activated(let device):
                return
                    "Activated \(device.instanceID): certificate until \(Activate.date(device.certificateNotAfter)), reactivation \(device.reactivationDue ? "due now" : "due from \(device.reactivationDueAt.map(Activate.date) ?? "-")"), attestation \(device.attestation ?? "-")."
            case .revoked(let reason): return "Revoked by the provider (\(reason ?? "no reason given")): deactivate, then activate again."
            case .certificateRejected(let reason):
                return "The provider refuses the certificate (\(reason ?? "no reason given")): deactivate, then activate again."
            }
        }
    }

    struct Reactivate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Renew the certificate: a new instance id, a fresh login, a new key; the old certificate is revoked.")
        @OptionGroup var options: InstallationOptions

        func run() async throws {
            try await options.withInstallation { installation in
                let before = try await installation.enrolment.credential()?.instanceID
                let device = try await installation.reactivate()
                print(
                    "Reactivated: \(before ?? "-") → \(device.instanceID), certificate until \(device.certificateNotAfter.map(Activate.date) ?? "-")."
                )
            }
        }
    }

    struct Deactivate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give the device up: the provider revokes its certificate and tokens; the local key is deleted.")
        @OptionGroup var options: InstallationOptions

        func run() async throws {
            try await options.withInstallation { installation in
                switch try await installation.enrolment.deactivate() {
                case .deactivated(let device): print("Deactivated \(device.instanceID); the local key is deleted.")
                case .alreadyRevoked(let reason): print("The provider had revoked it already (\(reason ?? "-")); the local key is deleted.")
                case .notActivated: print("Not activated: nothing to do.")
                }
            }
        }
    }
}

/// Where the installation lives and whom it talks to.
struct InstallationOptions: ParsableArguments {
    @Option(
        name: .customLong("data-dir"),
        help: "The server's data folder, for demo.json, dev-tls/ca.pem and the outbox (env SIGNET_DATA_DIR). Default ./.signet")
    var dataDirectory: String?

    @Option(help: "The installation's folder: its sealed key and certificate. Default <data-dir>/device")
    var folder: String?

    @Option(help: "The file holding the key the device key is sealed with (32 bytes, base64); made when missing. Default <folder>/sealing.key")
    var sealingKeyFile: String?

    @Option(help: "The provider's issuer. Default: demo.json's")
    var issuer: String?

    @Option(name: .customLong("client-id"), help: "The app's client id (allowed the scope device). Default: demo.json's app")
    var clientID: String?

    @Option(name: .customLong("redirect-uri"), help: "The app's redirect URI. Default: demo.json's app's")
    var redirectURI: String?

    @Option(help: "The user who logs in. Default: demo.json's")
    var username: String?

    @Flag(help: "Read the password from the first line of standard input (else demo.json's).")
    var passwordStdin = false

    @Option(name: .customLong("ca-file"), help: "A PEM CA to trust for the provider's TLS. Default <data-dir>/dev-tls/ca.pem when there is one")
    var caFile: String?

    var dataURL: URL { URL(fileURLWithPath: dataDirectory ?? Environment.value("DATA_DIR") ?? ".signet") }

    /// The installation's folder.
    var folderURL: URL { URL(fileURLWithPath: folder ?? dataURL.appendingPathComponent("device").path) }

    /// The facet id the demo app's registration trusts, when the server seeded one.
    var demoFacetID: String? { (try? DemoSeed.load(dataDirectory: dataURL))?.facetID }

    /// The installation's authenticators, sealed in its folder under its sealing key.
    func authenticatorKeyStore() throws -> SoftwareAuthenticatorKeyStore {
        SoftwareAuthenticatorKeyStore(
            directory: folderURL, encryptionKey: try SealingKey.load(path: sealingKeyFile ?? folderURL.appendingPathComponent("sealing.key").path))
    }

    /// Runs `body` with the installation these options describe, its HTTP clients shut down after.
    func withInstallation<Result: Sendable>(_ body: (Installation) async throws -> Result) async throws -> Result {
        let seed = try? DemoSeed.load(dataDirectory: dataURL)
        guard let issuer = issuer ?? Environment.value("ISSUER") ?? seed?.issuer, let clientID = clientID ?? seed?.nativeClientID,
            let redirectURI = redirectURI ?? seed?.nativeRedirectURI, let username = username ?? seed?.username
        else {
            throw ValidationError("name --issuer, --client-id, --redirect-uri and --username, or --data-dir of a server with demo data")
        }
        var password = seed?.password
        if passwordStdin {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw ValidationError("no password on standard input") }
            password = line
        }
        var roots: [String] = []
        if let path = caFile ?? DevelopmentTLS.caFile(dataDirectory: dataURL) {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("cannot read --ca-file \(path)") }
            roots.append(text)
        }
        let folder = folderURL
        let keyStore = SoftwareDeviceKeyStore(
            directory: folder, encryptionKey: try SealingKey.load(path: sealingKeyFile ?? folder.appendingPathComponent("sealing.key").path))
        return try await Installation.with(
            client: .init(issuer: issuer, clientID: clientID, redirectURI: redirectURI), keyStore: keyStore, trustRoots: roots,
            username: username, password: password, codes: SMSCodes(outbox: dataURL), body)
    }
}

/// SMS codes for the command's logins: from the development outbox when the server writes one,
/// else typed in.
struct SMSCodes: LoginCodeSource {
    let outbox: URL

    /// How many messages the outbox holds now.
    func count() -> Int { (try? DevelopmentOutbox.read(dataDirectory: outbox).count) ?? 0 }

    /// The code of the newest login code sent after the first `sent` messages, or one read from
    /// standard input when the outbox has none (a server with an SMS gateway).
    func code(after sent: Int) throws -> String {
        let messages = (try? DevelopmentOutbox.read(dataDirectory: outbox)) ?? []
        if messages.count > sent, let code = messages[sent...].last(where: { $0.purpose == "login_otp" })?.body.split(separator: "#").last {
            return String(code)
        }
        FileHandle.standardError.write(Data("SMS code: ".utf8))
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw ValidationError("no SMS code: no new message in the development outbox (is the server using an SMS webhook?) and none typed in")
        }
        return line
    }
}
