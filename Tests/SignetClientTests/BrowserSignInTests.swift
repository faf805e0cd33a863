import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTesting
import Synchronization
import Testing

@Suite("SignetClient: browser sign-in through an ExternalUserAgent, over real HTTP")
struct BrowserSignInTests {
    @Test("signIn runs the code flow through the agent: PKCE S256, state, nonce, login_hint and prompt sent; validated tokens come back")
    func fullSignIn() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let client = TestApp.client(provider)
            let presented = PresentedURLs()
            let tokens = try await client.signIn(
                agent: TestApp.agent(provider, presented: presented), scope: "openid profile", loginHint: "erin", prompt: "login")
            let url = try #require(presented.first)
            #expect(url.absoluteString.hasPrefix(provider.url("/authorize?")))
            #expect(queryItem("code_challenge_method", in: url) == "S256")
            #expect(queryItem("login_hint", in: url) == "erin")
            #expect(queryItem("prompt", in: url) == "login")
            #expect(queryItem("dpop_jkt", in: url) == nil, "no DPoP key store, no dpop_jkt")
            let nonce = try #require(queryItem("nonce", in: url))
            #expect(tokens.tokens.tokenType == "Bearer")
            #expect(!tokens.isDPoPBound)
            #expect(tokens.tokens.refreshToken != nil)
            let claims = try #require(tokens.idTokenClaims)
            #expect(claims.iss == provider.issuer)
            #expect(claims.aud == ["app"])
            #expect(claims.nonce == nonce)
            #expect(tokens.accessTokenExpiresAt == provider.clock.now.addingTimeInterval(TimeInterval(tokens.tokens.expiresIn ?? 0)))
            // The access token works at UserInfo as a bearer token.
            let userinfo = try await client.send(
                HTTPTransportRequest(method: "GET", url: try await client.discover().userinfoEndpoint), authorizedWith: tokens)
            #expect(userinfo.status == 200)
            #expect(try jwtClaims(tokens.accessToken)["sub"] as? String == claims.sub)
        }
    }

    @Test("acr_values are asked for and the ID token's acr must satisfy them")
    func acrValues() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let client = TestApp.client(provider)
            // One factor asked, one delivered.
            let tokens = try await client.signIn(agent: TestApp.agent(provider), acrValues: AssuranceLevel.oneFactor)
            #expect(tokens.idTokenClaims?.acr == AssuranceLevel.oneFactor)
            // Two factors asked, but the request that reached the provider lost its acr_values on the way.
            let stripped = ScriptedUserAgent { url, _ in
                try await provider.browserRedirect(
                    for: replacingQueryItem("acr_values", with: nil, in: url), username: "erin", password: "erins passphrase")
            }
            await #expect(throws: SignetClientError(.acrNotSatisfied, isRetryable: false)) {
                _ = try await client.signIn(agent: stripped, acrValues: AssuranceLevel.twoFactors)
            }
        }
    }

    @Test("a redirect with another state is refused as response_mismatch before any code is redeemed")
    func stateMismatch() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport)
            do {
                _ = try await client.signIn(agent: TestApp.agent(provider) { replacingQueryItem("state", with: "forged", in: $0) })
                Issue.record("a foreign state must be refused")
            } catch let error as SignetClientError {
                #expect(error.code == .responseMismatch)
                #expect(error.reason?.contains("state") == true)
            }
            #expect(transport.requests(to: "/token").isEmpty)
            // A redirect without state is refused the same way.
            await #expect(throws: SignetClientError(.responseMismatch, isRetryable: false)) {
                _ = try await client.signIn(agent: TestApp.agent(provider) { replacingQueryItem("state", with: nil, in: $0) })
            }
        }
    }

    @Test("a redirect whose iss is another issuer is refused (RFC 9207, mix-up defence)")
    func issuerMismatch() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport)
            do {
                _ = try await client.signIn(agent: TestApp.agent(provider) { replacingQueryItem("iss", with: "https://attacker.example", in: $0) })
                Issue.record("a foreign iss must be refused")
            } catch let error as SignetClientError {
                #expect(error.code == .responseMismatch)
                #expect(error.reason?.contains("iss") == true)
            }
            #expect(transport.requests(to: "/token").isEmpty)
        }
    }

    @Test("a redirect without iss is refused when the provider says it sends one (RFC 9207 §2.4)")
    func issuerMissing() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport)
            let dropIss: @Sendable (URL) -> URL = { url in
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
                components.queryItems = components.queryItems?.filter { $0.name != "iss" }
                return components.url!
            }
            do {
                _ = try await client.signIn(agent: TestApp.agent(provider, edit: dropIss))
                Issue.record("a redirect without iss must be refused")
            } catch let error as SignetClientError {
                #expect(error.code == .responseMismatch)
                #expect(error.reason?.contains("iss") == true)
            }
            #expect(transport.requests(to: "/token").isEmpty)
        }
    }

    @Test(
        "an http issuer or endpoint off loopback is refused before anything is sent: the ID token's signature is skipped only because TLS authenticates the token endpoint"
    )
    func plainHTTPRefused() async throws {
        let transport = RecordingTransport()
        let client = SignetClient(
            configuration: .init(issuer: "http://id.example.com", clientID: "app", redirectURI: "com.example.app:/cb"), transport: transport)
        do {
            _ = try await client.discover()
            Issue.record("an http issuer off loopback must be refused")
        } catch let error as SignetClientError {
            #expect(error.code == .misuse)
            #expect(error.reason?.contains("https") == true)
        }
        #expect(transport.requests(to: "/.well-known/openid-configuration").isEmpty)
    }

    @Test("an error redirect (prompt=none without a session: login_required) is thrown with the provider's error")
    func errorRedirect() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let client = TestApp.client(provider)
            do {
                _ = try await client.signIn(agent: TestApp.agent(provider), prompt: "none")
                Issue.record("prompt=none without a session must fail")
            } catch let error as SignetClientError {
                #expect(error.code == .server)
                #expect(error.serverError?.error == .loginRequired)
                #expect(error.isRetryable == false)
                #expect(error.errorDescription?.contains("login_required") == true)
            }
        }
    }

    @Test("the user closing the browser is cancelled; a cancelled task too; another agent failure is user_agent with its cause")
    func cancelled() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let client = TestApp.client(provider)
            await #expect(throws: SignetClientError(.cancelled, isRetryable: false)) {
                _ = try await client.signIn(agent: ScriptedUserAgent.cancelling)
            }
            // Cancelled while the browser is shown.
            let (shown, signal) = AsyncStream.makeStream(of: Void.self)
            let task = Task {
                try await client.signIn(
                    agent: ScriptedUserAgent { _, _ in
                        signal.yield()
                        try await Task.sleep(for: .seconds(60))
                        return URL(string: TestApp.redirectURI)!
                    })
            }
            var iterator = shown.makeAsyncIterator()
            await iterator.next()
            task.cancel()
            await #expect(throws: SignetClientError(.cancelled, isRetryable: false)) { _ = try await task.value }
            struct Broken: Error {}
            do {
                _ = try await client.signIn(agent: ScriptedUserAgent { _, _ in throw Broken() })
                Issue.record("a failing agent must fail the sign-in")
            } catch let error as SignetClientError {
                #expect(error.code == .userAgent)
                #expect(error.underlying is Broken)
            }
        }
    }

    @Test("a scope without openid is refused before anything is sent")
    func scopeWithoutOpenID() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport)
            await #expect(throws: SignetClientError(.misuse, isRetryable: false)) {
                _ = try await client.signIn(agent: TestApp.agent(provider), scope: "profile")
            }
            #expect(transport.requests.isEmpty)
        }
    }
}
