import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTesting
import Synchronization
import Testing

@Suite("SignetClient: DPoP-bound tokens (RFC 9449) against the provider over real HTTP")
struct DPoPClientTests {
    @Test("with a key store: dpop_jkt in the request, a proof at /token, token_type DPoP and cnf.jkt = the key's thumbprint")
    func boundTokens() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let store = MemoryDPoPKeyStore()
            let thumbprint = await store.key().thumbprint
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport, dpop: store)
            let presented = PresentedURLs()
            let tokens = try await client.signIn(agent: TestApp.agent(provider, presented: presented))
            #expect(queryItem("dpop_jkt", in: try #require(presented.first)) == thumbprint)
            #expect(tokens.tokens.tokenType == "DPoP")
            #expect(tokens.isDPoPBound)
            let cnf = try #require(try jwtClaims(tokens.accessToken)["cnf"] as? [String: Any])
            #expect(cnf["jkt"] as? String == thumbprint)
            // The proof at /token names the request and carries the public key.
            let tokenRequest = try #require(transport.requests(to: "/token").first)
            let proof = try #require(tokenRequest.header("DPoP"))
            let parsed = try CompactJWT.parse(proof).get()
            #expect(parsed.header.typ == "dpop+jwt")
            let claims = try jwtClaims(proof)
            #expect(claims["htm"] as? String == "POST")
            #expect(claims["htu"] as? String == provider.url("/token"))
            #expect(claims["ath"] == nil)
        }
    }

    @Test("the code is bound to the key in dpop_jkt: redeemed with another key, it is refused")
    func codeBoundToKey() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let client = TestApp.client(provider, dpop: MemoryDPoPKeyStore())
            let request = try await client.makeAuthorizationRequest()
            let redirect = try await provider.browserRedirect(for: request.url, username: "erin", password: "erins passphrase")
            let thief = TestApp.client(provider, dpop: MemoryDPoPKeyStore())
            do {
                _ = try await thief.redeem(redirect: redirect, request: request)
                Issue.record("another key must not redeem the code")
            } catch let error as SignetClientError {
                #expect(error.serverError?.error == .invalidGrant)
            }
        }
    }

    /// The test app seeded, a client with a DPoP key signed in: the client, its key store, what it
    /// sent, and its refresh token.
    func signedInWithKey(_ provider: TestProvider) async throws -> (SignetClient, MemoryDPoPKeyStore, RecordingTransport, String) {
        try await TestApp.seed(provider)
        let store = MemoryDPoPKeyStore()
        let transport = RecordingTransport()
        let client = TestApp.client(provider, transport: transport, dpop: store)
        let refreshToken = try #require(try await client.signIn(agent: TestApp.agent(provider)).tokens.refreshToken)
        return (client, store, transport, refreshToken)
    }

    @Test("refresh sends a proof and keeps the binding; the refresh token is useless without the key")
    func refreshWithProof() async throws {
        try await withTestProvider { provider in
            let (client, store, transport, refreshToken) = try await signedInWithKey(provider)
            // Without the key: a client with no DPoP, and one with another key.
            let bare = TestApp.client(provider)
            await #expect(throws: SignetClientError.self) { _ = try await bare.refresh(refreshToken) }
            let refreshed = try await client.refresh(refreshToken)
            #expect(refreshed.tokenType == "DPoP")
            #expect((try jwtClaims(refreshed.accessToken)["cnf"] as? [String: Any])?["jkt"] as? String == (await store.key().thumbprint))
            let refreshRequest = try #require(transport.requests(to: "/token").last)
            #expect(RecordingTransport.form(refreshRequest)["grant_type"] == "refresh_token")
            #expect(refreshRequest.header("DPoP") != nil)
        }
    }

    @Test("revocation sends a proof of the key, so a public client's bound refresh token is ended; revoked without the key, it is not")
    func revokeWithProof() async throws {
        try await withTestProvider { provider in
            let (client, _, transport, refreshToken) = try await signedInWithKey(provider)
            // A client without the key (one that copied the token) gets the same 200, and ends nothing.
            try await TestApp.client(provider).revoke(refreshToken)
            let refreshed = try await client.refresh(refreshToken)
            let current = try #require(refreshed.refreshToken)

            try await client.revoke(current)
            let revocation = try #require(transport.requests(to: "/revoke").first)
            let proof = try #require(revocation.header("DPoP"))
            #expect(try jwtClaims(proof)["htu"] as? String == provider.url("/revoke"))
            await #expect(throws: SignetClientError.self) { _ = try await client.refresh(current) }
        }
    }

    @Test("a resource call to /userinfo goes with the DPoP scheme and a proof carrying ath")
    func userInfo() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport, dpop: MemoryDPoPKeyStore())
            let state = try await AuthState(client: client, storage: MemoryAuthStateStorage())
            let tokens = try await state.signIn(agent: TestApp.agent(provider), scope: "openid profile")
            let endpoint = try await client.discover().userinfoEndpoint
            let response = try await state.send(HTTPTransportRequest(method: "GET", url: endpoint, headers: [("Accept", "application/json")]))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            let body = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
            #expect(body["sub"] as? String == tokens.idTokenClaims?.sub)
            let sent = try #require(transport.requests(to: "/userinfo").last)
            #expect(sent.header("Authorization") == "DPoP " + tokens.accessToken)
            let proof = try proofClaims(sent)
            #expect(proof["ath"] as? String == DPoPProofMaker.accessTokenHash(tokens.accessToken))
            #expect(proof["htm"] as? String == "GET")
            // The same token as a bearer token is refused: the provider wants the proof.
            let asBearer = try await client.send(
                HTTPTransportRequest(method: "GET", url: endpoint), accessToken: tokens.accessToken, tokenType: "Bearer")
            #expect(asBearer.status == 401)
            // A DPoP-bound token cannot be sent by a client without the key store.
            await #expect(throws: SignetClientError(.misuse, isRetryable: false)) {
                _ = try await TestApp.client(provider).send(HTTPTransportRequest(method: "GET", url: endpoint), authorizedWith: tokens)
            }
        }
    }

    @Test("server nonces: /token answers use_dpop_nonce and /userinfo a DPoP challenge; each is retried once with the nonce")
    func nonceRetry() async throws {
        try await withTestProvider(configure: { $0.dpopNonces = true }) { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport, dpop: MemoryDPoPKeyStore())
            let tokens = try await client.signIn(agent: TestApp.agent(provider))
            #expect(tokens.isDPoPBound)
            let tokenRequests = transport.requests(to: "/token")
            #expect(tokenRequests.count == 2, "one refused for want of a nonce, one retried with it")
            #expect(try proofClaims(tokenRequests[0])["nonce"] == nil)
            let nonce = try #require(try proofClaims(tokenRequests[1])["nonce"] as? String)
            // Later token requests carry the nonce from the start.
            _ = try await client.refresh(try #require(tokens.tokens.refreshToken))
            #expect(transport.requests(to: "/token").count == 3)
            #expect(try proofClaims(transport.requests(to: "/token")[2])["nonce"] as? String == nonce)
            // The resource hands out its own nonce (here the same provider's), learned per origin.
            let endpoint = try await client.discover().userinfoEndpoint
            let fresh = TestApp.client(provider, transport: transport, dpop: MemoryDPoPKeyStore())
            let other = try await fresh.signIn(agent: TestApp.agent(provider))
            let before = transport.requests(to: "/userinfo").count
            let response = try await fresh.send(HTTPTransportRequest(method: "GET", url: endpoint), authorizedWith: other)
            #expect(response.status == 200)
            #expect(transport.requests(to: "/userinfo").count == before + 1, "the nonce learned at /token (same origin) is sent at once")
        }
    }

    @Test("a resource's 401 DPoP challenge with use_dpop_nonce is retried once with its nonce, and only once")
    func resourceNonceChallenge() async throws {
        try await withTestProvider(configure: { $0.dpopNonces = true }) { provider in
            try await TestApp.seed(provider)
            let store = MemoryDPoPKeyStore()
            let tokens = try await TestApp.client(provider, dpop: store).signIn(agent: TestApp.agent(provider))
            // A new launch: same key, no nonce known yet.
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport, dpop: store)
            let endpoint = try await client.discover().userinfoEndpoint
            let response = try await client.send(HTTPTransportRequest(method: "GET", url: endpoint), authorizedWith: tokens)
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            let sent = transport.requests(to: "/userinfo")
            #expect(sent.count == 2, "first without the nonce, then with the one the 401 carried")
            #expect(try proofClaims(sent[0])["nonce"] == nil)
            #expect(try proofClaims(sent[1])["nonce"] != nil)

            // A resource that keeps asking gets one retry, then its answer comes back.
            transport.setRewrite { request, response in
                guard URLComponents(string: request.url)?.path == "/userinfo" else { return response }
                return HTTPTransportResponse(
                    status: 401,
                    headers: [("WWW-Authenticate", #"DPoP error="use_dpop_nonce", error_description="again""#), ("DPoP-Nonce", "n-\(UUID())")])
            }
            let stubborn = try await client.send(HTTPTransportRequest(method: "GET", url: endpoint), authorizedWith: tokens)
            #expect(stubborn.status == 401)
            #expect(transport.requests(to: "/userinfo").count == 4)
            // A Bearer challenge naming use_dpop_nonce is not a DPoP nonce request: no retry.
            transport.setRewrite { request, response in
                guard URLComponents(string: request.url)?.path == "/userinfo" else { return response }
                return HTTPTransportResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="use_dpop_nonce""#), ("DPoP-Nonce", "n")])
            }
            _ = try await client.send(HTTPTransportRequest(method: "GET", url: endpoint), authorizedWith: tokens)
            #expect(transport.requests(to: "/userinfo").count == 5)
        }
    }

    @Test("the file key store keeps one key across launches, readable by its owner only")
    func fileKeyStore() async throws {
        let file = try TestFolder.make("dpop", create: false).appendingPathExtension("key")
        defer { try? FileManager.default.removeItem(at: file) }
        let first = try await FileDPoPKeyStore(file: file).key().thumbprint
        #expect(try await FileDPoPKeyStore(file: file).key().thumbprint == first)
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        try Data("not a key".utf8).write(to: file)
        await #expect(throws: SignetClientError(.keyUnavailable, isRetryable: false)) { _ = try await FileDPoPKeyStore(file: file).key() }
    }

    @Test("parallel first uses of a key store get one key")
    func oneKey() async throws {
        let store = MemoryDPoPKeyStore()
        let thumbprints = await withTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { await store.key().thumbprint } }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(thumbprints.count == 1)
    }
}
