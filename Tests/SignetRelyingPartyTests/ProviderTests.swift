// Discovery, UserInfo, logout, the whole code flow, and the real HTTP transport.
import AsyncHTTPClient
import Foundation
import SignetCore
import SignetRelyingParty
import SignetTesting
import Testing

@Suite("Discovery")
struct DiscoveryTests {
    @Test("The discovery document is fetched from the well-known path once and then reused")
    func fetchedOnce() async throws {
        let provider = FakeProvider()
        let relyingParty = makeRelyingParty(provider)
        let document = try await relyingParty.discover()
        #expect(document.issuer == FakeProvider.issuer)
        #expect(document.tokenEndpoint == FakeProvider.issuer + "/token")
        _ = try await relyingParty.discover()
        _ = try await relyingParty.makeAuthorizationRequest(redirectURI: "https://service.example.com/cb")
        #expect(await provider.count("/.well-known/openid-configuration") == 1)
        #expect(await provider.requests.first?.url == FakeProvider.issuer + "/.well-known/openid-configuration")
    }

    @Test("A discovery document naming another issuer is refused, and so is everything that needs it")
    func issuerMismatch() async throws {
        let provider = FakeProvider()
        await provider.setDiscoveryIssuer("https://id.example.com/")
        let relyingParty = makeRelyingParty(provider)
        await #expect(throws: SignetError(.issuerMismatch, "")) { try await relyingParty.discover() }
        await #expect(throws: SignetError(.issuerMismatch, "")) {
            try await relyingParty.makeAuthorizationRequest(redirectURI: "https://service.example.com/cb")
        }
    }

    @Test("A provider that publishes only the required metadata works, and missing endpoints are configuration errors")
    func minimalDocument() async throws {
        let provider = FakeProvider()
        await provider.setMinimalDiscovery(true)
        let relyingParty = makeRelyingParty(provider)
        let document = try await relyingParty.discover()
        #expect(document.authorizationResponseIssParameterSupported == false)
        #expect(document.revocationEndpoint.isEmpty)
        let request = try await relyingParty.makeAuthorizationRequest(redirectURI: "https://service.example.com/cb")
        #expect(request.pending.requiresIssuerParameter == false)
        await #expect(throws: SignetError(.invalidConfiguration, "")) { try await relyingParty.revoke("t") }
        await #expect(throws: SignetError(.invalidConfiguration, "")) { try await relyingParty.userInfo(accessToken: "t") }
        await #expect(throws: SignetError(.invalidConfiguration, "")) { try await relyingParty.endSessionURL() }
    }

    @Test("An issuer on plain http is refused unless it is a loopback host")
    func plainHTTP() async throws {
        let provider = FakeProvider()
        let configuration = RelyingPartyConfiguration(issuer: "http://id.example.com", clientID: "c", clientAuthentication: .none)
        await #expect(throws: SignetError(.invalidConfiguration, "")) {
            try await RelyingParty(configuration: configuration, transport: provider).discover()
        }
        #expect(await provider.requests.isEmpty)
    }
}

@Suite("UserInfo and logout")
struct UserInfoAndLogoutTests {
    @Test("UserInfo is a bearer GET whose claims come back with the sub")
    func userInfo() async throws {
        let provider = FakeProvider()
        let info = try await makeRelyingParty(provider).userInfo(accessToken: "at-1", expectedSubject: "user-1")
        #expect(info.sub == "user-1")
        #expect(info["email"] == .string("a@example.com"))
        let request = try #require(await provider.last("/userinfo"))
        #expect(request.method == "GET")
        #expect(request.header("authorization") == "Bearer at-1")
    }

    @Test("UserInfo about another subject than the ID token's is refused")
    func subjectMismatch() async throws {
        await #expect(throws: SignetError(.invalidToken, "")) {
            try await makeRelyingParty(FakeProvider()).userInfo(accessToken: "at", expectedSubject: "user-2")
        }
    }

    @Test("A refused access token surfaces the WWW-Authenticate error")
    func bearerChallenge() async throws {
        let provider = FakeProvider()
        await provider.setUserInfoAnswer(
            HTTPTransportResponse(
                status: 401,
                headers: [("WWW-Authenticate", #"Bearer realm="signet", error="invalid_token", error_description="The token \"expired\""#)]))
        let error = await #expect(throws: SignetError.self) { try await makeRelyingParty(provider).userInfo(accessToken: "at") }
        #expect(error?.code == .oauth)
        #expect(error?.oauthError == OAuthError(.invalidToken, #"The token "expired""#))
    }

    @Test("The end-session URL keeps the endpoint's query and adds the hint, client_id, redirect and state")
    func endSession() async throws {
        let url = try await makeRelyingParty(FakeProvider()).endSessionURL(
            idTokenHint: "id.token.hint", postLogoutRedirectURI: "https://service.example.com/bye?x=1", state: "st")
        #expect(url.absoluteString.hasPrefix(FakeProvider.issuer + "/logout?ui=1&"))
        let parameters = try #require(query(url))
        #expect(parameters["id_token_hint"] == "id.token.hint")
        #expect(parameters["client_id"] == FakeProvider.clientID)
        #expect(parameters["post_logout_redirect_uri"] == "https://service.example.com/bye?x=1")
        #expect(parameters["state"] == "st")
    }
}

@Suite("Code flow")
struct CodeFlowTests {
    @Test("completeAuthorization checks the redirect, redeems the code and validates the ID token")
    func completes() async throws {
        let provider = FakeProvider()
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))
        let relyingParty = makeRelyingParty(provider, clock: clock)
        let request = try await relyingParty.makeAuthorizationRequest(redirectURI: "https://service.example.com/cb")
        var claims = provider.claims(now: clock.seconds, nonce: request.pending.nonce)
        claims.atHash = TokenHash.sha256Half(of: "at-1")
        let idToken = try await provider.sign(claims)
        try await provider.answerTokens(TokenResponse(accessToken: "at-1", expiresIn: 600, refreshToken: "rt", idToken: idToken, scope: "openid"))

        let url = redirect(request.pending, [("code", "c-1"), ("state", request.pending.state), ("iss", FakeProvider.issuer)])
        let completed = try await relyingParty.completeAuthorization(redirect: url, pending: request.pending)
        #expect(completed.idToken == claims)
        #expect(completed.tokens.accessToken == "at-1")
        #expect(form(await provider.last("/token"))?["code_verifier"] == request.pending.codeVerifier)
    }

    @Test("completeAuthorization returns no tokens when the ID token is missing or was issued for another request")
    func refusesBadIDToken() async throws {
        let provider = FakeProvider()
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))
        let relyingParty = makeRelyingParty(provider, clock: clock)
        let request = try await relyingParty.makeAuthorizationRequest(redirectURI: "https://service.example.com/cb")
        let url = redirect(request.pending, [("code", "c-1"), ("state", request.pending.state), ("iss", FakeProvider.issuer)])

        let replayed = try await provider.sign(provider.claims(now: clock.seconds, nonce: "another-request"))
        try await provider.answerTokens(TokenResponse(accessToken: "at", expiresIn: 600, refreshToken: nil, idToken: replayed, scope: nil))
        let error = await #expect(throws: SignetError.self) { try await relyingParty.completeAuthorization(redirect: url, pending: request.pending) }
        #expect(error?.code == .invalidToken)
        #expect(error?.reason.contains(IDTokenFailure.nonceMismatch.rawValue) == true)

        try await provider.answerTokens(TokenResponse(accessToken: "at", expiresIn: 600, refreshToken: nil, idToken: nil, scope: nil))
        await #expect(throws: SignetError(.invalidToken, "")) {
            try await relyingParty.completeAuthorization(redirect: url, pending: request.pending)
        }
    }
}

@Suite("AsyncHTTPClient transport")
struct AsyncHTTPClientTransportTests {
    @Test("A connection that cannot be made is a transport failure")
    func connectionRefused() async throws {
        let transport = AsyncHTTPClientTransport(timeout: .milliseconds(500))
        await #expect(throws: SignetError(.transportFailure, "")) {
            try await transport.send(HTTPTransportRequest(method: "GET", url: "http://127.0.0.1:1/.well-known/openid-configuration"))
        }
    }
}
