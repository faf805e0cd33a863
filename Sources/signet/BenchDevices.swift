// `signet bench`'s device rows: activation, a request over mutual TLS, a certificate-bound refresh.
import AsyncHTTPClient
import Foundation
import SignetClient
import SignetClientNIO
import SignetCore

/// Where the device rows run: a `signet serve --dev-tls` and the app client that activates.
struct DeviceBench: Sendable {
    let client: SignetClient.Configuration
    /// The development CA (PEM) the server's certificate is signed by.
    let trustRoots: [String]

    /// No SMS step in the benchmark's logins (its users have no phone).
    struct NoCodes: LoginCodeSource {
        func count() -> Int { 0 }
        func code(after mark: Int) throws -> String { throw SignetError(.malformedMessage, "the benchmark's logins have no SMS step") }
    }

    /// One whole activation of a fresh installation: instance id, native login with it as the
    /// nonce, a new key and its certificate; new TLS connections, as a newly installed app makes.
    func activate(as user: BenchUser, keyStore: any DeviceKeyStore = MemoryDeviceKeyStore()) async throws -> DeviceCredential {
        try await Installation.with(client: client, keyStore: keyStore, trustRoots: trustRoots, username: user.username, password: user.password, codes: NoCodes()) {
            installation in
            _ = try await installation.activate()
            guard let credential = try await keyStore.load() else { throw SignetError(.malformedMessage, "the key store kept nothing") }
            return credential
        }
    }

    /// An activated installation of `user` with a long-lived client presenting its certificate
    /// (connections kept, as an app keeps them) and a certificate-bound refresh token.
    func device(for user: BenchUser) async throws -> BenchDevice {
        let credential = try await activate(as: user)
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
            return BenchDevice(http: http, client: app, refreshToken: refreshToken)
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

    init(http: HTTPClient, client: SignetClient, refreshToken: String) {
        self.http = http
        self.client = client
        self.refreshToken = refreshToken
    }

    /// `GET /devices/status` over mutual TLS: the certificate checked against the CAs and the store.
    func status() async throws -> Bool {
        let response = try await NIOHTTPTransport(client: http).send(HTTPTransportRequest(method: "GET", url: client.configuration.issuer + "/devices/status"))
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
