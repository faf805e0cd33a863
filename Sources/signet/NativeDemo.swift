// `signet demo --native`: the stepwise login with SMS, as an app using SignetClient.
import Foundation
import SignetClient
import SignetCore
import SignetRelyingParty
import SignetServer

/// The native demo's steps, in order.
struct NativeDemoScript {
    let seed: DemoSeed
    let issuer: String
    let dataDirectory: URL
    let narrator: Narrator

    func run() async throws {
        let client = SignetClient(configuration: .init(issuer: issuer, clientID: seed.nativeClientID, redirectURI: seed.nativeRedirectURI))
        let parameters = AuthorizationParameters(clientID: seed.nativeClientID, redirectURI: seed.nativeRedirectURI, scope: "openid profile")

        var step = try await client.nativeLogin().start(parameters)
        guard case .selectScenario(let scenarios) = step.kind else { throw failure("no scenarios offered") }
        narrator.step(
            "Started a native login for \(seed.nativeClientID) (PKCE S256, state, nonce)",
            "scenarios: \(scenarios.map(\.rawValue).joined(separator: ", "))")

        step = try await step.select(scenario: .usernamePasswordSMS)
        narrator.step("Selected \(LoginScenario.usernamePasswordSMS.rawValue)")

        let codes = SMSCodes(outbox: dataDirectory)
        let sentBefore = codes.count()
        step = try await step.submit(username: seed.username, password: seed.password, rememberMe: true)
        guard case .smsCode(let sms) = step.kind else { throw failure("the SMS step did not follow the password") }
        narrator.step("Username and password accepted; a \(sms.digits)-digit code was sent to \(sms.phoneHint)")

        let code = try codes.code(after: sentBefore)
        narrator.step("Read the code from the development outbox (`signet outbox`)", "#\(code)")

        step = try await step.submit(code: code)
        guard case .finished(let result) = step.kind else { throw failure("the login did not finish after the code") }
        narrator.step(
            "Code accepted: the provider issued an authorization code", "remember token kept: \(result.rememberToken != nil ? "yes" : "no")")

        let tokens = try await result.exchange()
        let relyingParty = RelyingParty(
            configuration: RelyingPartyConfiguration(issuer: issuer, clientID: seed.nativeClientID, clientAuthentication: .none))
        let validation = try await relyingParty.validateIDToken(
            tokens.idToken ?? "", expectation: IDTokenExpectation(issuer: issuer, clientID: seed.nativeClientID, nonce: parameters.nonce),
            accessToken: tokens.accessToken)
        guard let claims = validation.claims else { throw failure("the ID token did not validate: \(validation)") }
        narrator.step("Exchanged the code with the PKCE verifier; ID token valid", "acr \(claims.acr ?? "-"), amr \(claims.amr ?? [])")

        var again = try await client.nativeLogin().start(
            AuthorizationParameters(clientID: seed.nativeClientID, redirectURI: seed.nativeRedirectURI), rememberToken: result.rememberToken)
        again = try await again.select(scenario: .usernamePassword)
        guard case .password(let username) = again.kind else { throw failure("the remember token did not skip the username step") }
        narrator.step("A new login with the remember token skips the username step", "next: password for \(username ?? "?")")
    }

    func failure(_ reason: String) -> SignetError { SignetError(.malformedMessage, reason) }
}
