import Foundation
import SignetClient
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("SignetClient: sign-out revokes the grant (RFC 7009) and makes the end-session URL")
struct SignOutTests {
    @Test("signOut revokes the refresh token (a later refresh fails with invalid_grant), clears storage and returns a correct end-session URL")
    func revokesAndEndsSession() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport)
            let storage = MemoryAuthStateStorage()
            let state = try await AuthState(client: client, storage: storage)
            let tokens = try await state.signIn(agent: TestApp.agent(provider))
            let refreshToken = try #require(tokens.tokens.refreshToken)

            let result = try await state.signOut(endSession: true)
            #expect(result.revoked)
            #expect(result.revocationError == nil)
            #expect(await state.isSignedIn == false)
            #expect(await storage.load() == nil)
            let revocation = try #require(transport.requests(to: "/revoke").first)
            #expect(RecordingTransport.form(revocation)["token"] == refreshToken)
            #expect(RecordingTransport.form(revocation)["token_type_hint"] == "refresh_token")
            #expect(RecordingTransport.form(revocation)["client_id"] == "app")
            do {
                _ = try await client.refresh(refreshToken)
                Issue.record("a revoked refresh token must not refresh")
            } catch let error as SignetClientError {
                #expect(error.serverError?.error == .invalidGrant)
            }

            let url = try #require(result.endSessionURL)
            let document = try await client.discover()
            #expect(url.absoluteString.hasPrefix(document.endSessionEndpoint + "?"))
            #expect(queryItem("id_token_hint", in: url) == tokens.tokens.idToken)
            #expect(queryItem("client_id", in: url) == "app")
            #expect(queryItem("post_logout_redirect_uri", in: url) == TestApp.postLogoutRedirectURI)
            let sentState = try #require(queryItem("state", in: url))
            #expect(sentState == result.endSessionState)
            // The provider accepts it: with no provider session left in this (ephemeral) browser it
            // goes straight back to the registered post-logout URI with the state, not to an error page.
            let page = try await ScriptedBrowser().get(url.absoluteString)
            #expect(page.status == 302, "\(page.body.prefix(300))")
            let back = try #require(page.header("Location").flatMap(URL.init(string:)))
            #expect(back.absoluteString.hasPrefix(TestApp.postLogoutRedirectURI))
            #expect(queryItem("state", in: back) == sentState)
        }
    }

    @Test("without a refresh token, signOut revokes the access token, which ends the grant: the token no longer works at UserInfo")
    func revokesAccessTokenWithoutRefreshToken() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            var client = try #require(try await provider.store.client(id: "app"))
            client.allowsRefreshTokens = false
            _ = try await provider.store.replaceClient(client)
            let transport = RecordingTransport()
            let app = TestApp.client(provider, transport: transport)
            let state = try await AuthState(client: app, storage: MemoryAuthStateStorage())
            let tokens = try await state.signIn(agent: TestApp.agent(provider))
            #expect(tokens.tokens.refreshToken == nil)
            let userinfo = HTTPTransportRequest(method: "GET", url: try await app.discover().userinfoEndpoint)
            #expect(try await app.send(userinfo, authorizedWith: tokens).status == 200)

            let result = try await state.signOut()
            #expect(result.revoked)
            let revocation = try #require(transport.requests(to: "/revoke").first)
            #expect(RecordingTransport.form(revocation)["token"] == tokens.accessToken)
            #expect(RecordingTransport.form(revocation)["token_type_hint"] == "access_token")
            #expect(try await app.send(userinfo, authorizedWith: tokens).status == 401)
        }
    }

    @Test("the tokens are forgotten even when revocation fails; the failure is reported, not thrown")
    func revocationFails() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport)
            let state = try await AuthState(client: client, storage: MemoryAuthStateStorage())
            try await state.signIn(agent: TestApp.agent(provider))
            transport.setRewrite { request, response in
                URLComponents(string: request.url)?.path == "/revoke"
                    ? HTTPTransportResponse(status: 503, body: Data(#"{"error":"temporarily_unavailable"}"#.utf8)) : response
            }
            let changes = state.changes
            let result = try await state.signOut()
            #expect(result.revoked == false)
            #expect(result.revocationError?.serverError?.error == .temporarilyUnavailable)
            #expect(result.endSessionURL == nil, "not asked for")
            #expect(await state.isSignedIn == false)
            var iterator = changes.makeAsyncIterator()
            #expect(await iterator.next() == .signedOut)
            await #expect(throws: SignetClientError(.notSignedIn, isRetryable: false)) { _ = try await state.validTokens() }
        }
    }

    @Test("signing out when signed out sends nothing and reports nothing to revoke")
    func notSignedIn() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let state = try await AuthState(client: TestApp.client(provider, transport: transport), storage: MemoryAuthStateStorage())
            let result = try await state.signOut()
            #expect(result.revoked)
            #expect(transport.requests(to: "/revoke").isEmpty)
        }
    }
}
