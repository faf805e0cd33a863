// One buildApplication for the command, the tests and the benchmarks.
import Crypto
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HTTPTypes
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SignetCore
import SignetStore

/// Builds the identity provider as a Hummingbird application.
///
/// Prepares the signing keys and the device CA (creating them on first start), wires every
/// endpoint, and adds the background services (expiry cleanup).
///
/// - Parameters:
///   - configuration: the settings; call ``SignetConfiguration/problems()`` first to refuse bad ones.
///   - store: where everything is kept (``MemoryStore`` or SignetStorage's SQL store).
///   - clock: the time source; tests pass a fixed clock.
///   - random: the randomness source.
///   - logger: the logger; nothing secret is ever logged (see docs/logging.md).
///   - messageSender: delivers SMS one-time codes (``DevelopmentOutbox``, ``WebhookMessageSender``, ``MemoryOutbox``).
///   - attestationVerifier: judges the attestation of initial device certificates (``DevelopmentAttestationVerifier`` accepts all, as `none`).
///   - boundIssuer: receives the issuer once bound, when `issuerFollowsBoundPort` is set.
///   - metrics: where requests, logins and tokens are counted (``buildAdminApplication`` serves them).
///   - onServerRunning: called with the bound port once the server listens.
public func buildApplication(
    configuration: SignetConfiguration,
    store: any SignetStore,
    clock: SignetClock = .system,
    random: SecureRandom = SecureRandom(),
    logger: Logger = Logger(label: "signet"),
    messageSender: any MessageSender,
    attestationVerifier: any AttestationVerifier = DevelopmentAttestationVerifier(),
    boundIssuer: BoundIssuer = BoundIssuer(),
    metrics: SignetMetrics = SignetMetrics(),
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    // A programming error in an embedding application, caught at start rather than at the first
    // record written with such a date (the records' hand-written JSON takes finite numbers only).
    if let name = configuration.unstorableLifetime {
        preconditionFailure("SignetConfiguration.\(name) must be a finite number of seconds, at most a century")
    }
    let keyRing = KeyRing(store: store, clock: clock, refreshInterval: configuration.keyRefreshInterval)
    try await keyRing.prepare()
    // The device CA exists from the start, so `/devices/ca.pem` can be given to a TLS terminator
    // (and TLS below can name it) before any device is activated; one near its end is rotated
    // as an activation would.
    let deviceAuthorities = DeviceAuthorities(
        store: store, clock: clock, random: random, certificateValidity: configuration.deviceCertificateValidity)
    _ = try await deviceAuthorities.issuing()
    let keys = try await ServerKeys.load(from: store, random: random)
    let server = ServerContext(issuer: configuration.issuer, boundIssuer: boundIssuer, clock: clock, random: random, logger: logger, metrics: metrics)
    let router = Router(context: SignetRequestContext.self)
    let forwarded = ForwardedFor(trustedProxies: configuration.trustedProxies, header: configuration.forwardedHeader)
    router.add(middleware: ClientAddressMiddleware(forwarded: forwarded))
    router.add(middleware: RequestTelemetryMiddleware(logger: logger, metrics: metrics, forwarded: forwarded))
    router.add(
        middleware: SecurityHeadersMiddleware(
            strictTransportSecurity: configuration.tlsCertificatePath != nil || configuration.issuer.lowercased().hasPrefix("https://")))
    router.add(middleware: StorageOutageMiddleware())
    router.add(middleware: DurableWritesMiddleware(store: store))
    SignetRoutes(
        server: server, store: store, configuration: configuration, keyRing: keyRing, keys: keys, authorities: deviceAuthorities,
        messages: messageSender,
        keySource: RegisteredClientKeys(clock: clock, fetch: SafeFetch(limits: configuration.jwksFetch)), attestationVerifier: attestationVerifier
    ).register(on: router)

    var httpServer: HTTPServerBuilder = .http1()
    if let certificatePath = configuration.tlsCertificatePath, let keyPath = configuration.tlsKeyPath {
        let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        // TLS 1.2 only with the AEAD, forward-secret suites of BCP 195 (RFC 9325 §4.2), as FAPI 2.0
        // §5.2 asks; TLS 1.3's suites are all of that kind.
        tls.cipherSuiteValues = [
            .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        ]
        // Mutual TLS for devices (RFC 8705): every client is asked for a certificate and none is
        // required, so browsers carry on without one. The CA names sent are the device CAs' (all
        // named alike), so a browser never offers its user's other certificates. Whatever chain a
        // client presents is let through here — the handshake has proved it holds the key — and
        // checked on each request that needs it (DeviceIdentification), against the CAs and the
        // revocations in the store as they are at that moment.
        tls.certificateVerification = .optionalVerification
        let authorities = try await deviceAuthorities.trustedRecords()
        if !authorities.isEmpty {
            tls.trustRoots = .certificates(try authorities.map { try NIOSSLCertificate(bytes: Array($0.certificatePEM.utf8), format: .pem) })
            tls.sendCANameList = true
        }
        httpServer = try .tls(
            .http1(), configuration: TLSChannelConfiguration(tlsConfiguration: tls, customAsyncVerificationCallback: { _ in .certificateVerified }))
    }
    return Application(
        router: router,
        server: httpServer,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
        services: [
            ExpiryCleanupService(store: store, clock: clock, interval: configuration.cleanupInterval, logger: logger),
            KeyRotationService(
                keys: store, replays: store, clients: store, keyRing: keyRing,
                audit: AuditTrail(store: store, clock: clock, random: random, logger: logger),
                policy: configuration.keyRotation, configuration: configuration, clock: clock, logger: logger,
                interval: configuration.keyRotationCheckInterval),
        ],
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            if configuration.issuerFollowsBoundPort {
                let scheme = configuration.tlsCertificatePath == nil ? "http" : "https"
                let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
                boundIssuer.set("\(scheme)://\(host):\(port)")
            }
            await onServerRunning(port)
        },
        logger: logger
    )
}

/// The composition root: every component is built here, once, from the narrow store protocols
/// and the settings it uses; then each endpoint is routed to its component.
struct SignetRoutes: Sendable {
    let server: ServerContext
    let store: any SignetStore
    let configuration: SignetConfiguration
    let keyRing: KeyRing
    let keys: ServerKeys
    /// The device CAs, made before the routes (`/devices/ca.pem` answers from the start).
    let authorities: DeviceAuthorities
    let messages: any MessageSender
    let keySource: any ClientKeySource
    let attestationVerifier: any AttestationVerifier

    func register(on router: Router<SignetRequestContext>) {
        let settings = configuration
        let maxBodySize = settings.maxBodySize
        let audit = AuditTrail(store: store, clock: server.clock, random: server.random, logger: server.logger)
        let pages = PageRenderer(issuer: { [server] in server.issuer })
        let sessions = BrowserSessions(server: server, sessions: store, users: store, browserSessionLifetime: settings.browserSessionLifetime)
        let ownTokens = OwnTokenVerifier(keys: keyRing, grants: store, users: store, server: server)
        let minter = TokenMinter(
            keys: keyRing, refreshTokens: store, lifetimes: settings.tokenLifetimes, server: server)
        let codeIssuer = AuthorizationCodeIssuer(
            server: server, grants: store, devices: store, clients: store, lifetimes: settings.tokenLifetimes)
        let rememberTokens = RememberTokens(server: server, tokens: store, users: store, rememberTokenLifetime: settings.rememberTokenLifetime)
        let validator = AuthorizationRequestValidator(
            clients: store, devices: store, maxParameterLength: settings.maxParameterLength,
            requirePushedRequests: settings.requirePushedAuthorizationRequests, now: { [server] in server.now() })
        let clientJWTs = ClientJWTVerifier(keySource: keySource, logger: server.logger)
        let authenticator = ClientAuthenticator(
            server: server, clients: store, replays: store, jwtVerifier: clientJWTs, clockSkew: settings.clockSkew,
            maxClientAssertionLifetime: settings.maxClientAssertionLifetime)
        let discovery = DiscoveryEndpoint(
            server: server, keyRing: keyRing, requirePushedAuthorizationRequests: settings.requirePushedAuthorizationRequests,
            acceptsClientCertificates: settings.acceptsClientCertificates)
        let requestObjects = RequestObjectReader(
            server: server, clients: store, replays: store, clockSkew: settings.clockSkew,
            verifier: clientJWTs)
        let requests = AuthorizationRequestReader(
            ownTokens: ownTokens, validator: validator, pushedRequests: PushedRequests(server: server, pushedRequests: store),
            requestObjects: requestObjects)
        let dpop = DPoPProofVerifier(
            replay: store, clock: server.clock, lifetime: settings.dpopProofLifetime, skew: settings.clockSkew,
            nonces: settings.dpopNonces ? DPoPNonceIssuer(key: keys.csrf, clock: server.clock, window: 300) : nil)
        let pushed = PushedAuthorizationEndpoint(
            server: server, pushedRequests: store, pushedRequestLifetime: settings.pushedRequestLifetime, maxBodySize: maxBodySize,
            authenticator: authenticator, dpop: dpop, requests: requests)
        let runner = LoginRunner(
            server: server, logins: store, users: store, limitStore: store, throttleStore: store, durability: store, codeIssuer: codeIssuer,
            rememberTokens: rememberTokens, audit: audit, hasher: PasswordHasher(cost: settings.passwordHashCost), messages: messages,
            otpKey: keys.otp,
            smsPolicy: settings.sms, throttlePolicy: settings.throttle)
        let loginSessions = LoginSessions(server: server, logins: store, clients: store)
        let login = LoginPage(
            server: server, clients: store, users: store, logins: store, codeIssuer: codeIssuer, rememberTokens: rememberTokens, runner: runner,
            loginSessions: loginSessions,
            pages: pages, sessions: sessions, smsPolicy: settings.sms, loginPageLifetime: settings.loginPageLifetime,
            rememberTokenLifetime: settings.rememberTokenLifetime, maxBodySize: maxBodySize)
        let authorize = AuthorizeEndpoint(
            server: server, codeIssuer: codeIssuer, loginPage: login, pages: pages, requests: requests, sessions: sessions, maxBodySize: maxBodySize)
        let devices = DeviceIdentification(
            source: ClientCertificateSource(
                header: settings.clientCertificateHeader.flatMap { HTTPField.Name($0) },
                forwarded: ForwardedFor(trustedProxies: settings.trustedProxies, header: settings.forwardedHeader)),
            authorities: authorities, store: store, clock: server.clock)
        let access = OwnResourceAccess(server: server, clients: store, ownTokens: ownTokens, maxBodySize: maxBodySize, dpop: dpop, devices: devices)
        let lifecycle = DeviceLifecycle(store: store, clock: server.clock, random: server.random, logger: server.logger, messages: messages)
        let token = TokenEndpoint(
            server: server, grants: store, users: store, deviceStore: store, minter: minter, audit: audit, authenticator: authenticator, dpop: dpop,
            devices: devices, maxBodySize: maxBodySize, maxParameterLength: settings.maxParameterLength)
        let userInfo = UserInfoEndpoint(access: access)
        let revocation = RevocationEndpoint(
            server: server, grants: store, ownTokens: ownTokens, audit: audit, maxBodySize: maxBodySize, authenticator: authenticator, dpop: dpop,
            devices: devices)
        let logout = LogoutEndpoint(
            clients: store, users: store, ownTokens: ownTokens, rememberTokens: rememberTokens, audit: audit, keys: keys, pages: pages,
            sessions: sessions, maxBodySize: maxBodySize)
        let native = NativeLoginEndpoint(
            server: server, clients: store, logins: store, rememberTokens: rememberTokens, runner: runner, loginSessions: loginSessions,
            requests: requests,
            smsPolicy: settings.sms,
            loginPageLifetime: settings.loginPageLifetime, maxBodySize: maxBodySize)
        let instances = DeviceInstances(server: server, clients: store, devices: store, limits: store, maxBodySize: maxBodySize)
        let activation = DeviceActivation(
            server: server, grants: store, deviceStore: store, instances: instances, access: access, authorities: authorities, devices: devices,
            lifecycle: lifecycle, deviceCertificateValidity: settings.deviceCertificateValidity, reactivationWindow: settings.reactivationWindow)
        let initialCertificates = InitialCertificates(
            server: server, deviceStore: store, initialCertificateValidity: settings.initialCertificateValidity, instances: instances,
            authorities: authorities, devices: devices, verifier: attestationVerifier)
        let selfService = DeviceSelfService(
            server: server, deviceStore: store, authenticators: store, access: access, devices: devices, lifecycle: lifecycle,
            authenticatorPolicy: settings.authenticators, reactivationWindow: settings.reactivationWindow)
        let certificateStatus = CertificateStatus(store: store, authorities: authorities, clock: server.clock)
        let uaf = UAFOperations(
            server: server, users: store, authenticators: store, replays: store, lifecycle: lifecycle, uafKey: keys.uaf,
            authenticatorPolicy: settings.authenticators)
        let authenticators = AuthenticatorEndpoints(
            server: server, clients: store, deviceStore: store, authenticators: store, authenticatorPolicy: settings.authenticators,
            maxBodySize: maxBodySize, access: access, devices: devices, lifecycle: lifecycle, operations: uaf)
        let deviceLogin = DeviceLoginEndpoint(
            server: server, clients: store, users: store, logins: store, runner: runner, loginSessions: loginSessions, requests: requests,
            devices: devices,
            operations: uaf,
            authenticatorPolicy: settings.authenticators, maxBodySize: maxBodySize)

        let health = HealthEndpoints(server: server, readiness: store, keyRing: keyRing)
        let groups: [any EndpointGroup] = [
            discovery, health, authorize, pushed, login, native, token, revocation, userInfo, logout, instances, activation, initialCertificates,
            selfService, certificateStatus, authenticators, deviceLogin,
        ]
        EndpointTable(groups, maxBodySize: maxBodySize, logger: server.logger).register(on: router)
    }
}

/// Removes expired codes, tokens, sessions and replay records on a timer.
struct ExpiryCleanupService: Service {
    let store: any SignetStore
    let clock: SignetClock
    let interval: TimeInterval
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(interval))
                    do { try await store.purgeExpired(before: clock.now()) } catch {
                        logger.warning("expiry cleanup failed", metadata: ["error": .string(String(describing: error))])
                    }
                }
            }
        } catch is CancellationError {
            // Shutdown: nothing to finish.
        }
    }
}
