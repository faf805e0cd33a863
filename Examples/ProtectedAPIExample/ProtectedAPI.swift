// The protected API of the example: its configuration and the application, built once for main and the tests.
import Foundation
import Hummingbird
import Logging
import SignetCore
import SignetRelyingParty
import SignetResourceServer

/// The example API's settings, read from the environment by ``init(environment:)``.
struct ProtectedAPIConfiguration: Sendable {
    /// The provider's issuer identifier (`SIGNET_ISSUER`).
    var issuer: String
    /// This API's resource identifier, as registered for the client at the provider (`API_AUDIENCE`).
    var audience: String
    /// The URL callers use to reach this API, without a trailing `/` (`API_PUBLIC_URL`): what
    /// their DPoP proofs' `htu` start with.
    var publicURL: String
    /// The address to listen on (`API_HOST`, default 127.0.0.1).
    var host: String = "127.0.0.1"
    /// The port to listen on (`API_PORT`, default 8081; 0 picks a free one).
    var port: Int = 8081
    /// The scope `GET /accounts` needs (`API_ACCOUNTS_SCOPE`, default `accounts`).
    var accountsScope: String = "accounts"
    /// Whether only DPoP-bound tokens are accepted (`API_REQUIRE_DPOP`, default `true`; FAPI 2.0 §5.3.4).
    var requireSenderConstrained: Bool = true

    /// The configuration from `environment`; throws `invalid_configuration` naming what is missing.
    init(environment: [String: String]) throws {
        func required(_ name: String) throws -> String {
            guard let value = environment[name], !value.isEmpty else { throw SignetError(.invalidConfiguration, "set \(name)") }
            return value
        }
        issuer = try required("SIGNET_ISSUER")
        audience = try required("API_AUDIENCE")
        publicURL = try required("API_PUBLIC_URL")
        if let host = environment["API_HOST"] { self.host = host }
        if let port = environment["API_PORT"] {
            guard let number = Int(port), (0...65_535).contains(number) else {
                throw SignetError(.invalidConfiguration, "API_PORT must be a port number")
            }
            self.port = number
        }
        if let scope = environment["API_ACCOUNTS_SCOPE"], !scope.isEmpty { accountsScope = scope }
        if let flag = environment["API_REQUIRE_DPOP"] {
            guard let value = Bool(flag.lowercased()) else { throw SignetError(.invalidConfiguration, "API_REQUIRE_DPOP must be true or false") }
            requireSenderConstrained = value
        }
    }

    /// The settings of the token verifier.
    var verifier: AccessTokenVerifierConfiguration {
        // FAPI 2.0 §5.4: PS256, ES256 and EdDSA only, for the tokens and the callers' proofs.
        AccessTokenVerifierConfiguration(
            issuer: issuer, audience: audience, algorithms: ["PS256", "ES256", "EdDSA"], requireSenderConstrained: requireSenderConstrained)
    }
}

/// What `GET /accounts` answers: who called, through which app, and their (made-up) accounts.
struct AccountsResponse: ResponseCodable, Equatable {
    var sub: String
    var clientID: String
    var accounts: [String]

    enum CodingKeys: String, CodingKey {
        case sub, accounts
        case clientID = "client_id"
    }
}

/// The example's routes: `GET /health` open to all, `GET /accounts` behind the access-token middleware.
func buildRouter(configuration: ProtectedAPIConfiguration, verifier: AccessTokenVerifier) -> Router<BasicAccessTokenRequestContext> {
    let router = Router(context: BasicAccessTokenRequestContext.self)
    router.get("health") { _, _ in "ok" }
    router.group("accounts")
        .add(
            middleware: AccessTokenMiddleware(
                verifier: verifier, publicBaseURL: configuration.publicURL, requiredScopes: [configuration.accountsScope])
        )
        .get { _, context in
            let token = try context.requireAccessToken()
            return AccountsResponse(sub: token.subject, clientID: token.clientID, accounts: ["everyday", "savings"])
        }
    return router
}

/// The example API as a Hummingbird application: used by `main.swift` and by the end-to-end tests.
///
/// - Parameters:
///   - configuration: the issuer, audience, public URL and address.
///   - transport: how the issuer's discovery document and keys are fetched.
///   - now: the clock of token and proof checks (tests pass the provider's test clock).
///   - logger: where the server logs (never tokens or proofs: only refusal reasons).
///   - onServerRunning: told the bound port once the server listens.
func buildApplication(
    configuration: ProtectedAPIConfiguration,
    transport: any HTTPTransport = AsyncHTTPClientTransport(),
    now: @escaping @Sendable () -> Date = Date.init,
    logger: Logger = Logger(label: "ProtectedAPIExample"),
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let verifier = AccessTokenVerifier(configuration: configuration.verifier, transport: transport, now: now)
    return Application(
        router: buildRouter(configuration: configuration, verifier: verifier),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ProtectedAPIExample"),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
        logger: logger)
}
