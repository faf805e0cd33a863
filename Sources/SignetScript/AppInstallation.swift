// An app installation played on Linux: its sealed device key, its device API and its user's logins.
import Crypto
import Foundation
import SignetClient
import SignetClientNIO
import SignetCore

/// Where a login's SMS code comes from.
public protocol LoginCodeSource: Sendable {
    /// A mark to read codes sent after it.
    func count() -> Int
    /// The code sent after `mark`.
    func code(after mark: Int) throws -> String
}

/// The AES key an installation's device key is sealed with, kept in a file of its own (0600).
public enum SealingKey {
    /// The key in the file at `path`, or a new one written there (0600) when there is no file.
    public static func load(path: String) throws -> SymmetricKey {
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32 else {
                throw ScriptError("\(path) does not hold 32 bytes in base64")
            }
            return SymmetricKey(data: bytes)
        }
        let key = SymmetricKey(size: .bits256)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let text = key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        do { try PrivateFile.write(Data(text.utf8), to: path) } catch {
            throw ScriptError("cannot write \(path): \(error)")
        }
        return key
    }
}

/// One app installation: its device API and the user who logs in on it.
public struct Installation: Sendable {
    public let enrolment: DeviceEnrolment
    public let username: String
    public let password: String?
    public let codes: any LoginCodeSource

    public init(enrolment: DeviceEnrolment, username: String, password: String?, codes: any LoginCodeSource) {
        self.enrolment = enrolment
        self.username = username
        self.password = password
        self.codes = codes
    }

    /// The SDK client the installation logs in through.
    public var client: SignetClient { enrolment.client }

    /// Runs `body` with an installation of `client` keeping its key in `keyStore`, trusting
    /// `trustRoots` (PEM) besides the system's for TLS; its HTTP clients are shut down after.
    public static func with<Result: Sendable>(
        client configuration: SignetClient.Configuration, keyStore: any DeviceKeyStore, trustRoots: [String], username: String, password: String?,
        codes: any LoginCodeSource, _ body: (Installation) async throws -> Result
    ) async throws -> Result {
        try await NIOHTTPTransport.withTransport(presenting: nil, additionalTrustRoots: trustRoots) { transport in
            let client = SignetClient(configuration: configuration, transport: transport)
            let installation = Installation(
                enrolment: client.devices(keyStore: keyStore, mutualTLS: NIOMutualTLSTransportFactory(additionalTrustRoots: trustRoots)),
                username: username, password: password, codes: codes)
            return try await body(installation)
        }
    }

    /// Activation: an instance id, a native login with it as the nonce, the certificate.
    public func activate(name: String? = nil) async throws -> RegisteredDevice {
        let instance = try await enrolment.instanceID()
        let tokens = try await logIn(enrolment.authorizationParameters(for: instance), via: client)
        return try await enrolment.issueCertificate(accessToken: tokens.accessToken, name: name)
    }

    /// Reactivation: a new instance id and a fresh login through the bound client (over mutual
    /// TLS with the current certificate), then the new key's certificate.
    public func reactivate() async throws -> RegisteredDevice {
        guard try await enrolment.credential() != nil else {
            throw ScriptError("this folder holds no device certificate: activate first")
        }
        let instance = try await enrolment.instanceID()
        let tokens = try await logIn(enrolment.authorizationParameters(for: instance), via: enrolment.boundClient)
        return try await enrolment.reactivate(accessToken: tokens.accessToken)
    }

    /// A native login of ``username`` through `client`: password, then the SMS code when asked.
    public func logIn(_ parameters: AuthorizationParameters, via client: SignetClient) async throws -> TokenResponse {
        guard let password else { throw ScriptError("no password: pass --password-stdin") }
        var step = try await client.nativeLogin().start(parameters)
        if case .selectScenario(let offered) = step.kind {
            step = try await step.select(scenario: offered.contains(.usernamePassword) ? .usernamePassword : .usernamePasswordSMS)
        }
        let sent = codes.count()
        step = try await step.submit(username: username, password: password)
        if case .smsCode = step.kind { step = try await step.submit(code: try codes.code(after: sent)) }
        guard case .finished(let result) = step.kind else { throw SignetError(.malformedMessage, "the login did not finish") }
        return try await result.exchange()
    }
}

/// A refusal by a scripted party (an app installation), with its reason for the person who ran it.
public struct ScriptError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension SignetClient {
    /// Fresh parameters for a native login of this client.
    public func nativeLoginParameters(scope: String = "openid", acrValues: String? = nil) -> AuthorizationParameters {
        AuthorizationParameters(clientID: configuration.clientID, redirectURI: configuration.redirectURI, scope: scope, acrValues: acrValues)
    }
}
