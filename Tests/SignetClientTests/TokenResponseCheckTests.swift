import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTesting
import Testing

/// Bad token responses: the provider's real answer, edited on the way by the transport.
@Suite("SignetClient: token responses are checked before they are kept")
struct TokenResponseCheckTests {
    /// Signs in with `rewrite` applied to the token response and returns the error thrown.
    func signInError(
        _ provider: TestProvider, rewrite: RecordingTransport.Rewrite? = nil, dpop: (any DPoPKeyStore)? = nil, clockOffset: TimeInterval = 0
    ) async throws -> SignetClientError {
        let client = TestApp.client(provider, transport: RecordingTransport(rewrite: rewrite), dpop: dpop, clockOffset: clockOffset)
        do {
            let tokens = try await client.signIn(agent: TestApp.agent(provider))
            Issue.record("the sign-in must fail, got \(tokens)")
            return SignetClientError(.misuse, isRetryable: false)
        } catch let error as SignetClientError {
            return error
        }
    }

    @Test("an ID token with another nonce is refused: invalid_id_token naming nonce_mismatch")
    func wrongNonce() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let error = try await signInError(provider, rewrite: rewritingTokenResponse(idTokenClaims: ["nonce": "replayed-from-elsewhere"]))
            #expect(error.code == .invalidIDToken)
            #expect(error.idTokenFailures == [.nonceMismatch])
            #expect(error.errorDescription?.contains("nonce does not match") == true)
        }
    }

    @Test("an ID token for another audience is refused: wrong_audience; a second audience without azp = client: untrusted")
    func wrongAudience() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let other = try await signInError(provider, rewrite: rewritingTokenResponse(idTokenClaims: ["aud": "another-app", "azp": "another-app"]))
            #expect(other.code == .invalidIDToken)
            #expect(other.idTokenFailures.contains(.wrongAudience))
            let extra = try await signInError(
                provider, rewrite: rewritingTokenResponse(idTokenClaims: ["aud": ["app", "another-app"], "azp": "another-app"]))
            #expect(extra.idTokenFailures == [.untrustedAudience])
        }
    }

    @Test("an ID token from another issuer is refused: wrong_issuer")
    func wrongIssuer() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let error = try await signInError(provider, rewrite: rewritingTokenResponse(idTokenClaims: ["iss": "https://attacker.example"]))
            #expect(error.idTokenFailures == [.wrongIssuer])
        }
    }

    @Test("an expired ID token is refused: a device clock a day ahead sees exp in the past")
    func expired() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let error = try await signInError(provider, clockOffset: 86_400)
            #expect(error.code == .invalidIDToken)
            #expect(error.idTokenFailures == [.expired])
            let future = try await signInError(provider, clockOffset: -86_400)
            #expect(future.idTokenFailures == [.issuedInFuture])
        }
    }

    @Test("an access token the ID token does not vouch for (at_hash) is refused")
    func atHashMismatch() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let error = try await signInError(provider, rewrite: rewritingTokenResponse(members: ["access_token": "swapped.access.token"]))
            #expect(error.idTokenFailures == [.atHashMismatch])
        }
    }

    @Test("a response without an ID token, or with one that is not a JWS, is refused")
    func missingOrMalformed() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let missing = try await signInError(provider, rewrite: rewritingTokenResponse(members: ["id_token": NSNull()]))
            #expect(missing.code == .invalidIDToken)
            #expect(missing.idTokenFailures == [.malformed])
            let garbage = try await signInError(provider, rewrite: rewritingTokenResponse(members: ["id_token": "not-a-jwt"]))
            #expect(garbage.idTokenFailures == [.malformed])
            // alg none: the same claims under an unsecured header.
            let unsecured: RecordingTransport.Rewrite = { request, response in
                guard URLComponents(string: request.url)?.path == "/token",
                    var json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any],
                    let idToken = json["id_token"] as? String
                else { return response }
                let header = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64URLEncodedString()
                json["id_token"] = header + "." + idToken.split(separator: ".")[1] + ".c2ln"
                var rewritten = response
                rewritten.body = (try? JSONSerialization.data(withJSONObject: json)) ?? Data()
                return rewritten
            }
            let none = try await signInError(provider, rewrite: unsecured)
            #expect(none.idTokenFailures == [.unacceptableAlgorithm])
        }
    }

    @Test("token_type Bearer when a DPoP proof was sent is refused, and DPoP when none was")
    func tokenType() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let downgraded = try await signInError(
                provider, rewrite: rewritingTokenResponse(members: ["token_type": "Bearer"]), dpop: MemoryDPoPKeyStore())
            #expect(downgraded.code == .unexpectedTokenType)
            #expect(downgraded.reason?.contains("expected DPoP") == true)
            let unasked = try await signInError(provider, rewrite: rewritingTokenResponse(members: ["token_type": "DPoP"]))
            #expect(unasked.code == .unexpectedTokenType)
        }
    }

    @Test("a refresh whose ID token names another user is refused and its tokens are not kept")
    func refreshWithOtherSubject() async throws {
        try await withTestProvider { provider in
            try await TestApp.seed(provider)
            let transport = RecordingTransport()
            let client = TestApp.client(provider, transport: transport)
            let state = try await AuthState(client: client, storage: MemoryAuthStateStorage())
            let signedIn = try await state.signIn(agent: TestApp.agent(provider))
            transport.setRewrite(rewritingTokenResponse(idTokenClaims: ["sub": "someone-else"]))
            provider.clock.advance(by: 590)
            do {
                _ = try await state.validTokens()
                Issue.record("another sub must be refused")
            } catch let error as SignetClientError {
                #expect(error.code == .invalidIDToken)
                #expect(error.reason?.contains("sub") == true)
            }
            #expect(await state.tokens == signedIn)
        }
    }
}
