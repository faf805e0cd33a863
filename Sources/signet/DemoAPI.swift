// The API `signet demo --fapi` calls: a Hummingbird app behind the resource-server middleware.
import Foundation
import Hummingbird
import Logging
import SignetCore
import SignetRelyingParty
import SignetResourceServer
import SignetScript
import SignetServer

/// A tiny bank API on a loopback port: `GET /accounts` needs a DPoP-bound token for `audience`
/// with the scope `accounts`, as `Examples/ProtectedAPIExample` does.
struct DemoAPI {
    let issuer: String
    let audience: String

    /// Runs the API while `body` runs, passing it the API's base URL.
    func run<Result: Sendable>(_ body: @Sendable (String) async throws -> Result) async throws -> Result {
        let port = try FreePort.find()
        let baseURL = "http://127.0.0.1:\(port)"
        let verifier = AccessTokenVerifier(
            configuration: AccessTokenVerifierConfiguration(issuer: issuer, audience: audience, algorithms: FAPI2Profile.algorithms))
        let router = Router(context: BasicAccessTokenRequestContext.self)
        router.group("accounts")
            .add(middleware: AccessTokenMiddleware(verifier: verifier, publicBaseURL: baseURL, requiredScopes: ["accounts"]))
            .get { _, context in
                let token = try context.requireAccessToken()
                return "{\"sub\":\"\(token.subject)\",\"accounts\":[\"everyday\",\"savings\"]}"
            }
        var logger = Logger(label: "signet.demo-api")
        logger.logLevel = .critical
        return try await withRunningService("the demo API", logger: logger) { [logger] listening in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
                onServerRunning: { _ in await listening(port) }, logger: logger)
        } _: { _ in
            try await body(baseURL)
        }
    }
}
