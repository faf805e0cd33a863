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
    let keys = KeyRing(store: store, clock: clock, refreshInterval: configuration.keyRefreshInterval)
    try await keys.prepare()
    // The device CA exists from the start, so `/devices/ca.pem` can be given to a TLS terminator
    // (and TLS below can name it) before any device is activated; one near its end is rotated
    // as an activation would.
    let deviceAuthorities = DeviceAuthorities(store: store, clock: clock, random: random, certificateValidity: configuration.deviceCertificateValidity)
    _ = try await deviceAuthorities.issuing()
    let otpKey = try await store.secret(named: "otp-hmac-key", orStore: random.token())
    let csrfKey = try await store.secret(named: "csrf-hmac-key", orStore: random.token())
    let provider = Provider(
        configuration: configuration, store: store, keys: keys, clock: clock, random: random,
        passwords: PasswordHasher(cost: configuration.passwordHashCost), logger: logger, messages: messageSender,
        otpKey: SymmetricKey(data: Data(otpKey.utf8)), csrfKey: SymmetricKey(data: Data(csrfKey.utf8)), boundIssuer: boundIssuer, metrics: metrics)
    let router = Router(context: SignetRequestContext.self)
    let forwarded = ForwardedFor(trustedProxies: configuration.trustedProxies, header: configuration.forwardedHeader)
    router.add(middleware: ClientAddressMiddleware(forwarded: forwarded))
    router.add(middleware: RequestTelemetryMiddleware(logger: logger, metrics: metrics, forwarded: forwarded))
    router.add(middleware: SecurityHeadersMiddleware(strictTransportSecurity: configuration.tlsCertificatePath != nil || configuration.issuer.lowercased().hasPrefix("https://")))
    router.add(middleware: DurableWritesMiddleware(store: store))
    SignetRoutes(
        provider: provider, keySource: RegisteredClientKeys(clock: clock, fetch: SafeFetch(limits: configuration.jwksFetch)),
        attestationVerifier: attestationVerifier
    ).register(on: router)

    var server: HTTPServerBuilder = .http1()
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
        server = try .tls(.http1(), configuration: TLSChannelConfiguration(tlsConfiguration: tls, customAsyncVerificationCallback: { _ in .certificateVerified }))
    }
    return Application(
        router: router,
        server: server,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
        services: [ExpiryCleanupService(store: store, clock: clock, interval: configuration.cleanupInterval, logger: logger)],
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

/// The routes and the endpoint behind each.
struct SignetRoutes: Sendable {
    let provider: Provider
    let keySource: any ClientKeySource
    let attestationVerifier: any AttestationVerifier

    func register(on router: Router<SignetRequestContext>) {
        let pages = PageRenderer(issuer: { [provider] in provider.issuer })
        let sessions = BrowserSessions(provider: provider)
        let validator = AuthorizationRequestValidator(
            clients: provider.store, devices: provider.store, maxParameterLength: provider.configuration.maxParameterLength,
            requirePushedRequests: provider.configuration.requirePushedAuthorizationRequests, now: { [provider] in provider.now() })
        let authenticator = ClientAuthenticator(provider: provider, keySource: keySource)
        let discovery = DiscoveryEndpoint(provider: provider)
        let requestObjects = RequestObjectReader(provider: provider, verifier: ClientJWTVerifier(keySource: keySource, logger: provider.logger))
        let requests = AuthorizationRequestReader(
            provider: provider, validator: validator, pushedRequests: PushedRequests(provider: provider), requestObjects: requestObjects)
        let dpop = DPoPProofVerifier(
            replay: provider.store, clock: provider.clock, lifetime: provider.configuration.dpopProofLifetime, skew: provider.configuration.clockSkew,
            nonces: provider.configuration.dpopNonces ? DPoPNonces(key: provider.csrfKey, clock: provider.clock, window: 300) : nil)
        let pushed = PushedAuthorizationEndpoint(provider: provider, authenticator: authenticator, dpop: dpop, requests: requests)
        let authorize = AuthorizeEndpoint(provider: provider, pages: pages, requests: requests, sessions: sessions)
        let login = LoginPage(provider: provider, pages: pages, sessions: sessions)
        let authorities = DeviceAuthorities(
            store: provider.store, clock: provider.clock, random: provider.random, certificateValidity: provider.configuration.deviceCertificateValidity)
        let devices = DeviceIdentification(
            source: ClientCertificateSource(
                header: provider.configuration.clientCertificateHeader.flatMap { HTTPField.Name($0) },
                forwarded: ForwardedFor(trustedProxies: provider.configuration.trustedProxies, header: provider.configuration.forwardedHeader)),
            authorities: authorities, store: provider.store, clock: provider.clock)
        let access = OwnResourceAccess(provider: provider, dpop: dpop, devices: devices)
        let lifecycle = DeviceLifecycle(store: provider.store, clock: provider.clock, random: provider.random, logger: provider.logger, messages: provider.messages)
        let token = TokenEndpoint(provider: provider, authenticator: authenticator, dpop: dpop, devices: devices)
        let userInfo = UserInfoEndpoint(access: access)
        let revocation = RevocationEndpoint(provider: provider, authenticator: authenticator, dpop: dpop, devices: devices)
        let logout = LogoutEndpoint(provider: provider, pages: pages, sessions: sessions)
        let native = NativeLoginEndpoint(provider: provider, requests: requests)
        let instances = DeviceInstances(provider: provider)
        let activation = DeviceActivation(provider: provider, access: access, authorities: authorities, devices: devices, lifecycle: lifecycle)
        let initialCertificates = InitialCertificates(
            provider: provider, instances: instances, authorities: authorities, devices: devices, verifier: attestationVerifier)
        let selfService = DeviceSelfService(provider: provider, access: access, devices: devices, lifecycle: lifecycle)
        let certificateStatus = CertificateStatus(store: provider.store, authorities: authorities, clock: provider.clock)
        let uaf = UAFOperations(provider: provider, lifecycle: lifecycle)
        let authenticators = AuthenticatorEndpoints(provider: provider, access: access, devices: devices, lifecycle: lifecycle, operations: uaf)
        let deviceLogin = DeviceLoginEndpoint(provider: provider, requests: requests, devices: devices, operations: uaf)

        // Errors of the endpoints programs call are OAuth JSON, whatever raised them.
        router.add(
            middleware: OAuthEndpointMiddleware(
                endpoints: [
                    "/token": .init(methods: [.post], requiresForm: true), "/revoke": .init(methods: [.post], requiresForm: true),
                    "/par": .init(methods: [.post], requiresForm: true),
                    "/devices/instances": .init(methods: [.post], requiresForm: false),
                    "/devices/activation": .init(methods: [.post], requiresForm: false, bodyTypes: EnrolmentBody.mediaTypes),
                    "/devices/reactivation": .init(methods: [.post], requiresForm: false, bodyTypes: EnrolmentBody.mediaTypes),
                    "/devices/initial-certificate": .init(methods: [.post], requiresForm: false, bodyTypes: ["application/json"]),
                    "/devices/deactivation": .init(methods: [.post], requiresForm: false),
                    "/devices/status": .init(methods: [.get], requiresForm: false),
                    "/devices/certificate-status": .init(methods: [.get], requiresForm: false),
                    "/devices": .init(methods: [.get], requiresForm: false),
                    "/devices/ca.pem": .init(methods: [.get], requiresForm: false),
                    "/userinfo": .init(methods: [.get, .head, .post], requiresForm: false),
                    "/uaf/registration/request": .init(methods: [.post], requiresForm: false, bodyTypes: ["application/json"]),
                    "/uaf/registration/response": .init(methods: [.post], requiresForm: false, bodyTypes: ["application/json"]),
                    "/uaf/deregistration": .init(methods: [.post], requiresForm: false, bodyTypes: ["application/json"]),
                    "/uaf/pin/change/request": .init(methods: [.post], requiresForm: false, bodyTypes: ["application/json"]),
                    "/uaf/pin/change/response": .init(methods: [.post], requiresForm: false, bodyTypes: ["application/json"]),
                    "/login/device/start": .init(methods: [.post], requiresForm: false, bodyTypes: ["application/json"]),
                    "/login/device/finish": .init(methods: [.post], requiresForm: false, bodyTypes: ["application/json"]),
                ], maxBodySize: provider.configuration.maxBodySize, logger: provider.logger,
                prefixedEndpoints: [
                    ("/devices/", .init(methods: [.patch, .delete, .post], requiresForm: false)), ("/uaf/facets/", .init(methods: [.get], requiresForm: false)),
                ]))

        router.get("/.well-known/openid-configuration", use: discovery.configuration)
        router.get("/jwks", use: discovery.jwks)
        router.get("/authorize", use: authorize.handle)
        router.post("/authorize", use: authorize.handle)
        router.post("/login", use: login.submit)
        router.post("/login/sms", use: login.submitCode)
        router.post("/login/sms/resend", use: login.resend)
        router.post("/login/continue", use: login.continueAs)
        router.post("/token", use: token.handle)
        router.post("/par", use: pushed.handle)
        router.get("/userinfo", use: userInfo.handle)
        router.head("/userinfo", use: userInfo.handle)
        router.post("/userinfo", use: userInfo.handle)
        router.post("/revoke", use: revocation.handle)
        router.get("/logout", use: logout.handle)
        router.post("/logout", use: logout.handle)
        router.post("/devices/instances", use: instances.create)
        router.post("/devices/activation", use: activation.activate)
        router.post("/devices/reactivation", use: activation.reactivate)
        router.post("/devices/initial-certificate", use: initialCertificates.issue)
        router.get("/devices/status", use: selfService.status)
        router.post("/devices/deactivation", use: selfService.deactivate)
        router.get("/devices", use: selfService.list)
        router.patch("/devices/:instance_id", use: selfService.rename)
        router.delete("/devices/:instance_id", use: selfService.remove)
        router.post("/devices/:instance_id/lock", use: selfService.lock)
        router.get("/devices/certificate-status", use: certificateStatus.status)
        router.get("/devices/ca.pem", use: certificateStatus.caCertificates)
        router.get("/uaf/facets/:client_id", use: authenticators.facets)
        router.post("/uaf/registration/request", use: authenticators.registrationRequest)
        router.post("/uaf/registration/response", use: authenticators.registrationResponse)
        router.post("/uaf/deregistration", use: authenticators.deregistration)
        router.post("/uaf/pin/change/request", use: authenticators.pinChangeRequest)
        router.post("/uaf/pin/change/response", use: authenticators.pinChangeResponse)
        router.delete("/devices/:instance_id/authenticators/:key_id", use: authenticators.remove)
        router.post("/login/device/start", use: deviceLogin.start)
        router.post("/login/device/finish", use: deviceLogin.finish)
        router.post("/login/native/start", use: native.start)
        router.post("/login/native/scenario", use: native.selectScenario)
        router.post("/login/native/username_password", use: native.usernamePassword)
        router.post("/login/native/password", use: native.password)
        router.post("/login/native/sms_code", use: native.smsCode)
        router.post("/login/native/sms_code/resend", use: native.resendCode)
        router.get("/login/native/openapi.yaml") { _, _ in OpenAPIDocument.nativeLogin.response() }
        router.get("/assets/signet.css") { _, _ in PageRenderer.stylesheet() }
        router.get("/health") { _, _ in Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "ok"))) }
        let health = HealthEndpoints(provider: provider)
        router.get("/health/live", use: health.live)
        router.get("/health/ready", use: health.ready)

        // Wrong methods get 405 with Allow, not 404 (the OAuth endpoints' own come from OAuthEndpointMiddleware).
        let allowed: [(String, [HTTPRequest.Method])] = [
            ("/.well-known/openid-configuration", [.get]), ("/jwks", [.get]), ("/authorize", [.get, .post]), ("/login", [.post]),
            ("/login/sms", [.post]), ("/login/sms/resend", [.post]), ("/login/continue", [.post]), ("/logout", [.get, .post]),
        ]
        for (path, methods) in allowed {
            let allow = methods.map(\.rawValue).joined(separator: ", ")
            for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] where !methods.contains(method) {
                router.on(RouterPath(path), method: method) { _, _ in
                    Response(status: .methodNotAllowed, headers: [.allow: allow])
                }
            }
        }
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
