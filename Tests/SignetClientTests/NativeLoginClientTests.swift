import Foundation
import SignetClient
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

/// Registers an app and a user with a phone in a test provider.
func seedApp(_ provider: TestProvider) async throws {
    _ = try await provider.admin.addClient(
        .init(id: "app", name: "Example App", authMethod: .none, redirectURIs: ["com.example.app:/callback"], nativeLogin: true))
    try await provider.admin.addUser(username: "erin", password: "erins passphrase", name: "Erin", phoneNumber: "+4522222222")
}

func makeClient(_ provider: TestProvider) -> SignetClient {
    let clock = provider.clock
    return SignetClient(configuration: .init(issuer: provider.issuer, clientID: "app", redirectURI: "com.example.app:/callback"), now: { clock.now })
}

func lastCode(_ provider: TestProvider) async throws -> String {
    let message = try #require(await provider.outbox.last(to: "+4522222222"))
    return String(try #require(message.body.split(separator: "#").last))
}

@Suite("SignetClient: native login over real HTTP")
struct NativeLoginClientTests {
    @Test("start → scenario → username/password → SMS code → finished → tokens, with a remember token")
    func fullNativeLogin() async throws {
        try await withTestProvider { provider in
            try await seedApp(provider)
            let client = makeClient(provider)
            let parameters = AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/callback", scope: "openid profile")
            var step = try await client.nativeLogin().start(parameters)
            guard case .selectScenario(let scenarios) = step.kind else { Issue.record("expected scenarios"); return }
            #expect(scenarios.contains(.usernamePasswordSMS))
            step = try await step.select(scenario: .usernamePasswordSMS)
            #expect(step.kind == .usernamePassword)
            step = try await step.submit(username: "erin", password: "erins passphrase", rememberMe: true)
            guard case .smsCode(let sms) = step.kind else { Issue.record("expected the SMS step"); return }
            #expect(sms.phoneHint == "•••• 22")
            step = try await step.submit(code: try await lastCode(provider))
            guard case .finished(let result) = step.kind else { Issue.record("expected finished"); return }
            #expect(result.rememberToken != nil)
            let tokens = try await result.exchange()
            #expect(tokens.idToken != nil)

            // The remember token skips the username next time.
            var again = try await client.nativeLogin().start(
                AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/callback"), rememberToken: result.rememberToken)
            again = try await again.select(scenario: .usernamePassword)
            #expect(again.kind == .password(username: "erin"))
        }
    }

    @Test("errors keep the server's code and say whether to retry")
    func errors() async throws {
        try await withTestProvider { provider in
            try await seedApp(provider)
            let client = makeClient(provider)
            var step = try await client.nativeLogin().start(AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/callback"))
            step = try await step.select(scenario: .usernamePasswordSMS)
            do {
                _ = try await step.submit(username: "erin", password: "wrong")
                Issue.record("a wrong password must fail")
            } catch let error as SignetClientError {
                #expect(error.code == .server)
                #expect(error.serverError?.error.rawValue == "invalid_credentials")
                #expect(error.status == 401)
                #expect(error.isRetryable)
            }
            step = try await step.submit(username: "erin", password: "erins passphrase")
            let sent = try await lastCode(provider)
            do {
                _ = try await step.submit(code: sent == "000000" ? "111111" : "000000")
                Issue.record("a wrong code must fail")
            } catch let error as SignetClientError {
                #expect(error.serverError?.error.rawValue == "invalid_code")
                #expect(error.attemptsLeft == 2)
                #expect(error.isRetryable)
            }
            do {
                _ = try await step.resendCode()
                Issue.record("an early resend must fail")
            } catch let error as SignetClientError {
                #expect(error.serverError?.error.rawValue == "resend_too_early")
                #expect(error.retryAfter != nil)
            }
            await #expect(throws: SignetClientError.self) {
                _ = try await client.nativeLogin().start(AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/other"))
            }
        }
    }

    @Test("a code whose ID token is weaker than the acr_values asked for is refused with acr_not_satisfied")
    func acrDowngradeRefused() async throws {
        try await withTestProvider { provider in
            try await seedApp(provider)
            let client = makeClient(provider)
            // The request that reached the provider asked for one factor (its acr_values were dropped on the way)...
            let sent = AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/callback")
            var step = try await client.nativeLogin().start(sent)
            step = try await step.select(scenario: .usernamePassword)
            step = try await step.submit(username: "erin", password: "erins passphrase")
            guard case .finished(let result) = step.kind else { Issue.record("expected finished"); return }
            // ...but the app asked for two.
            await #expect(throws: SignetClientError(.acrNotSatisfied, isRetryable: false)) {
                _ = try await client.exchangeCode(result.code, verifier: sent.codeVerifier ?? "", acrValues: AssuranceLevel.twoFactors)
            }
            // Asked and delivered: two factors.
            let twoFactor = AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/callback", acrValues: AssuranceLevel.twoFactors)
            var strong = try await client.nativeLogin().start(twoFactor)
            strong = try await strong.select(scenario: .usernamePasswordSMS)
            strong = try await strong.submit(username: "erin", password: "erins passphrase")
            strong = try await strong.submit(code: try await lastCode(provider))
            guard case .finished(let done) = strong.kind else { Issue.record("expected finished"); return }
            #expect(try await done.exchange().idToken != nil)
        }
    }

    @Test("a backend can hold the verifier: the app gets only the code, and cannot redeem it itself")
    func backendHoldsVerifier() async throws {
        try await withTestProvider { provider in
            try await seedApp(provider)
            let client = makeClient(provider)
            // The backend's half: it makes the verifier and keeps it.
            let verifier = PKCE.makeVerifier()
            let handedOver = AuthorizationParameters(
                clientID: "app", redirectURI: "com.example.app:/callback", scope: "openid", state: "from-backend", nonce: "n",
                codeChallenge: PKCE.challenge(for: verifier))
            var step = try await client.nativeLogin().start(handedOver)
            step = try await step.select(scenario: .usernamePassword)
            step = try await step.submit(username: "erin", password: "erins passphrase")
            guard case .finished(let result) = step.kind else { Issue.record("expected finished"); return }
            await #expect(throws: SignetClientError(.misuse, isRetryable: false)) { _ = try await result.exchange() }
            // The backend redeems with its verifier.
            let tokens = try await client.exchangeCode(result.code, verifier: verifier)
            #expect(tokens.idToken != nil)
        }
    }

    @Test("AuthState refreshes an expiring token once for many callers, and signs out when the grant is gone")
    func authState() async throws {
        try await withTestProvider { provider in
            try await seedApp(provider)
            let client = makeClient(provider)
            var step = try await client.nativeLogin().start(AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/callback"))
            step = try await step.select(scenario: .usernamePassword)
            step = try await step.submit(username: "erin", password: "erins passphrase")
            guard case .finished(let result) = step.kind else { Issue.record("expected finished"); return }
            let folder = try TestFolder.make("tokens")
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("tokens.json")
            let state = try await AuthState(client: client, storage: FileAuthStateStorage(file: file))
            let exchanged = try await result.exchange()
            try await state.update(with: exchanged)
            let first = try await state.freshAccessToken()
            provider.clock.advance(by: 590)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<10 { group.addTask { try await state.freshAccessToken() } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(!tokens.contains(first))
            // Stored across launches.
            let reloaded = try await AuthState(client: client, storage: FileAuthStateStorage(file: file))
            #expect(await reloaded.isSignedIn)
            // Once the grant is revoked, refreshing signs out.
            let revoked = try await ScriptedBrowser().post(
                provider.url("/revoke"), form: [("token", try #require(exchanged.refreshToken)), ("client_id", "app")])
            #expect(revoked.status == 200)
            provider.clock.advance(by: 590)
            await #expect(throws: SignetClientError.self) { _ = try await state.freshAccessToken() }
            #expect(await state.isSignedIn == false)
        }
    }

    @Test("the browser flow: authorization URL with PKCE, then the redirect is checked and redeemed")
    func browserFlow() async throws {
        try await withTestProvider { provider in
            try await seedApp(provider)
            let client = makeClient(provider)
            let request = try await client.makeAuthorizationRequest(scope: "openid")
            #expect(request.url.absoluteString.contains("code_challenge_method=S256"))
            let browser = ScriptedBrowser()
            let page = try await browser.get(request.url.absoluteString)
            let fields = try #require(LoginForm.fields(in: page.body))
            let login = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "erin"), ("password", "erins passphrase"),
                ])
            let redirect = try #require(login.header("Location").flatMap(URL.init(string:)))
            let tokens = try await client.exchangeCode(redirect: redirect, request: request)
            #expect(tokens.refreshToken != nil)
            var forged = request
            forged.parameters.state = "other"
            await #expect(throws: SignetClientError(.responseMismatch, isRetryable: false)) {
                _ = try await client.exchangeCode(redirect: redirect, request: forged)
            }
        }
    }
}
