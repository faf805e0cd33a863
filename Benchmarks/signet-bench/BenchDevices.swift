// `signet-bench`'s device rows: activation, a request over mutual TLS, a certificate-bound refresh.
import AsyncHTTPClient
import Foundation
import SignetClient
import SignetClientNIO
import SignetCore
import SignetScript

/// Where the device rows run: a `signet serve --dev-tls` and the app client that activates.
struct DeviceBench: Sendable {
    let client: SignetClient.Configuration
    /// The development CA (PEM) the server's certificate is signed by.
    let trustRoots: [String]
    /// The demo app's trusted facet id.
    let facetID: String

    /// No SMS step in the benchmark's logins (its users have no phone).
    struct NoCodes: LoginCodeSource {
        func count() -> Int { 0 }
        func code(after mark: Int) throws -> String { throw SignetError(.malformedMessage, "the benchmark's logins have no SMS step") }
    }

    /// One whole activation of a fresh installation: instance id, native login with it as the
    /// nonce, a new key and its certificate; new TLS connections, as a newly installed app makes.
    func activate(as user: BenchUser, keyStore: any DeviceKeyStore = MemoryDeviceKeyStore()) async throws -> DeviceCredential {
        try await Installation.with(
            client: client, keyStore: keyStore, trustRoots: trustRoots, username: user.username, password: user.password, codes: NoCodes()
        ) {
            installation in
            _ = try await installation.activate()
            guard let credential = try await keyStore.load() else { throw SignetError(.malformedMessage, "the key store kept nothing") }
            return credential
        }
    }

    /// An activated installation of `user` with a long-lived client presenting its certificate
    /// (connections kept, as an app keeps them) and a certificate-bound refresh token.
    func device(for user: BenchUser) async throws -> BenchDevice {
        let keyStore = MemoryDeviceKeyStore()
        let credential = try await activate(as: user, keyStore: keyStore)
        let tls = try DeviceTLSConfiguration.client(presenting: credential, additionalTrustRoots: trustRoots)
        let http = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow, decompression: .disabled))
        do {
            let app = SignetClient(configuration: client, transport: NIOHTTPTransport(client: http))
            let installation = Installation(
                enrolment: app.devices(keyStore: MemoryDeviceKeyStore(), mutualTLS: NIOMutualTLSTransportFactory(additionalTrustRoots: trustRoots)),
                username: user.username, password: user.password, codes: NoCodes())
            let tokens = try await installation.logIn(app.nativeLoginParameters(), via: app)
            guard AccessTokenClaims.unverified(tokens.accessToken)?.cnf?.x5tS256 != nil, let refreshToken = tokens.refreshToken else {
                throw SignetError(.malformedMessage, "the login over mutual TLS gave no certificate-bound tokens")
            }
            // A PIN authenticator, its requests over the kept connection. Few PBKDF2 rounds: the
            // phone's derivation is the phone's cost, and would only steal the server's CPU here.
            let kept = KeptConnection(transport: NIOHTTPTransport(client: http))
            let authenticators = app.devices(keyStore: keyStore, mutualTLS: kept)
                .authenticators(keyStore: MemoryAuthenticatorKeyStore(), facetID: facetID, pinRounds: 1000)
            _ = try await authenticators.register(aaid: "F1D0#1001", pin: BenchDevice.pin, accessToken: tokens.accessToken)
            return BenchDevice(http: http, client: app, refreshToken: refreshToken, authenticators: authenticators)
        } catch {
            try? await http.shutdown()
            throw error
        }
    }
}

/// A worker's activated installation: its mutual-TLS client and its rotating bound refresh token.
final class BenchDevice: @unchecked Sendable {
    // Used by exactly one worker task at a time, so plain storage suffices.
    let http: HTTPClient
    let client: SignetClient
    private var refreshToken: String
    let authenticators: DeviceAuthenticators
    static let pin = "2580"

    init(http: HTTPClient, client: SignetClient, refreshToken: String, authenticators: DeviceAuthenticators) {
        self.http = http
        self.client = client
        self.refreshToken = refreshToken
        self.authenticators = authenticators
    }

    /// A passwordless device login: start, the UAF assertion with the PIN, finish (the code is not redeemed).
    func deviceLogin() async throws -> Bool {
        let challenge = try await authenticators.login.challenge(for: DeviceLoginInput(parameters: client.nativeLoginParameters()))
        _ = try await authenticators.login.verify(challenge, pin: Self.pin)
        return true
    }

    /// A device login whose code is redeemed at /token over mutual TLS: the whole flow to tokens.
    func deviceLoginToTokens() async throws -> Bool {
        let challenge = try await authenticators.login.challenge(for: DeviceLoginInput(parameters: client.nativeLoginParameters()))
        _ = try await authenticators.login.verify(challenge, pin: Self.pin).exchange()
        return true
    }

    /// `GET /devices/status` over mutual TLS: the certificate checked against the CAs and the store.
    func status() async throws -> Bool {
        let response = try await NIOHTTPTransport(client: http).send(
            HTTPTransportRequest(method: "GET", url: client.configuration.issuer + "/devices/status"))
        guard response.status == 200 else { throw SignetError(.malformedMessage, "status answered \(response.status)") }
        return true
    }

    /// A refresh with the certificate: the grant's device binding checked, new bound tokens.
    func refresh() async throws -> Bool {
        let tokens = try await client.refresh(refreshToken)
        guard let next = tokens.refreshToken else { throw SignetError(.malformedMessage, "no rotated refresh token") }
        refreshToken = next
        return true
    }

    func shutdown() async { try? await http.shutdown() }
}

/// Mutual TLS over one kept connection that already presents the device's certificate (a
/// benchmark's app keeps its connections, as URLSession does).
struct KeptConnection: MutualTLSTransportFactory {
    let transport: NIOHTTPTransport

    func withTransport<Result: Sendable>(presenting credential: DeviceCredential, _ body: (any HTTPTransport) async throws -> Result) async throws
        -> Result
    {
        try await body(transport)
    }
}
