// Code redemption, refresh and revocation, with each kind of client authentication.
import Crypto
import Foundation
import JWTKit
import SignetCore
import SignetJOSE
import SignetRelyingParty
import SignetTesting
import Testing

@Suite("Token endpoint")
struct TokenEndpointTests {
    let pending = PendingAuthorization(
        state: "s", nonce: "n", codeVerifier: PKCE.makeVerifier(), redirectURI: "https://service.example.com/callback")
    let tokens = TokenResponse(accessToken: "at", expiresIn: 600, refreshToken: "rt", idToken: nil, scope: "openid")

    @Test("A code is redeemed with grant_type, code, redirect_uri and the PKCE verifier")
    func exchange() async throws {
        let provider = FakeProvider()
        try await provider.answerTokens(tokens)
        let answer = try await makeRelyingParty(provider).exchangeCode("the-code", pending: pending)
        #expect(answer == tokens)
        let request = try #require(await provider.last("/token"))
        #expect(request.method == "POST")
        #expect(request.url == FakeProvider.issuer + "/token")
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
        let body = try #require(form(request))
        #expect(body.duplicatedNames.isEmpty)
        #expect(body["grant_type"] == "authorization_code")
        #expect(body["code"] == "the-code")
        #expect(body["redirect_uri"] == pending.redirectURI)
        #expect(body["code_verifier"] == pending.codeVerifier)
        #expect(body["client_id"] == FakeProvider.clientID)
        #expect(body["client_secret"] == nil && request.header("Authorization") == nil)
    }

    @Test("private_key_jwt posts an ES256 assertion with iss = sub = client_id, aud = the issuer as one string, a one-minute exp, a jti and the kid")
    func clientAssertion() async throws {
        let provider = FakeProvider()
        try await provider.answerTokens(tokens)
        let clientKey = P256.Signing.PrivateKey()
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))
        let relyingParty = makeRelyingParty(provider, clock: clock, authentication: .privateKeyJWT(privateKey: clientKey, keyID: "client-key-7"))
        _ = try await relyingParty.exchangeCode("the-code", pending: pending)

        let body = try #require(form(await provider.last("/token")))
        #expect(body["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        #expect(body["client_secret"] == nil)
        let assertion = try #require(body["client_assertion"])
        let header = try #require(JOSEHeader(compact: assertion))
        #expect(header.alg == "ES256")
        #expect(header.kid == "client-key-7")
        #expect(header.typ == "JWT")

        // The signature verifies with the client's public key and no other.
        let verifier = JWTKeyCollection()
        await verifier.add(ecdsa: try ES256PublicKey(backing: clientKey.publicKey), kid: "client-key-7")
        let claims = try await verifier.verify(assertion, as: ClientAssertionClaims.self)
        #expect(claims.iss == FakeProvider.clientID)
        #expect(claims.sub == FakeProvider.clientID)
        #expect(claims.aud == FakeProvider.issuer)
        // RFC 7523bis: a single JSON string, never an array.
        let payload = try #require(Data(base64URLEncoded: String(assertion.split(separator: ".")[1])))
        let raw = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(raw["aud"] as? String == FakeProvider.issuer)
        #expect(claims.iat == clock.seconds)
        #expect(claims.exp == clock.seconds + 60)
        #expect(claims.jti.count >= 22)

        let other = JWTKeyCollection()
        await other.add(ecdsa: try ES256PublicKey(backing: P256.Signing.PrivateKey().publicKey), kid: "client-key-7")
        await #expect(throws: (any Error).self) { try await other.verify(assertion, as: ClientAssertionClaims.self) }
    }

    @Test("A relying party sent through another transport keeps its configuration and clock: the assertion names the client and its time")
    func usingAnotherTransport() async throws {
        let first = FakeProvider()
        let second = FakeProvider()
        try await second.answerTokens(tokens)
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))
        let original = makeRelyingParty(first, clock: clock, authentication: .privateKeyJWT(privateKey: P256.Signing.PrivateKey(), keyID: "k"))
        _ = try await original.using(second).exchangeCode("the-code", pending: pending)
        #expect(await first.last("/token") == nil)
        let assertion = try #require(form(await second.last("/token"))?["client_assertion"])
        let payload = try #require(Data(base64URLEncoded: String(assertion.split(separator: ".")[1])))
        let raw = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(raw["iss"] as? String == FakeProvider.clientID)
        #expect(raw["iat"] as? Int == clock.seconds)
    }

    @Test("Every client assertion has a fresh jti")
    func freshJTI() async throws {
        let provider = FakeProvider()
        try await provider.answerTokens(tokens)
        let relyingParty = makeRelyingParty(provider, authentication: .privateKeyJWT(privateKey: P256.Signing.PrivateKey(), keyID: "k"))
        var jtis = Set<String>()
        for _ in 0..<5 {
            _ = try await relyingParty.refresh("rt")
            let assertion = try #require(form(await provider.last("/token"))?["client_assertion"])
            let claims = try await JWTKeyCollection().unverified(assertion, as: ClientAssertionClaims.self)
            #expect(jtis.insert(claims.jti).inserted)
        }
    }

    @Test("client_secret_basic form-encodes the id and secret before base64 (RFC 6749 §2.3.1)")
    func basicEncoding() async throws {
        let provider = FakeProvider()
        try await provider.answerTokens(tokens)
        let relyingParty = RelyingParty(
            configuration: RelyingPartyConfiguration(
                issuer: FakeProvider.issuer, clientID: "my client:1", clientAuthentication: .clientSecretBasic("p@ss:wörd+/ %")),
            transport: provider)
        _ = try await relyingParty.exchangeCode("c", pending: pending)

        let request = try #require(await provider.last("/token"))
        let header = try #require(request.header("Authorization"))
        #expect(header.hasPrefix("Basic "))
        let decoded = String(decoding: try #require(Data(base64Encoded: String(header.dropFirst(6)))), as: UTF8.self)
        #expect(decoded == "my%20client%3A1:p%40ss%3Aw%C3%B6rd%2B%2F%20%25")
        let body = try #require(form(request))
        #expect(body["client_id"] == nil && body["client_secret"] == nil)
    }

    @Test("client_secret_post sends the id and secret in the body")
    func secretPost() async throws {
        let provider = FakeProvider()
        try await provider.answerTokens(tokens)
        _ = try await makeRelyingParty(provider, authentication: .clientSecretPost("s3cret")).exchangeCode("c", pending: pending)
        let request = try #require(await provider.last("/token"))
        #expect(form(request)?["client_id"] == FakeProvider.clientID)
        #expect(form(request)?["client_secret"] == "s3cret")
        #expect(request.header("Authorization") == nil)
    }

    @Test("A refused code surfaces the provider's OAuth error")
    func oauthError() async throws {
        let provider = FakeProvider()
        await provider.setTokenAnswer(
            HTTPTransportResponse(status: 400, body: Data(#"{"error":"invalid_grant","error_description":"code expired"}"#.utf8)))
        let error = await #expect(throws: SignetError.self) {
            try await makeRelyingParty(provider).exchangeCode("c", pending: pending)
        }
        #expect(error?.code == .oauth)
        #expect(error?.oauthError == OAuthError(.invalidGrant, "code expired"))
    }

    @Test("A 5xx without an OAuth error is a transport failure, a 4xx without one a malformed message")
    func nonOAuthFailures() async throws {
        let provider = FakeProvider()
        let relyingParty = makeRelyingParty(provider)
        await provider.setTokenAnswer(HTTPTransportResponse(status: 502, body: Data("<html>".utf8)))
        await #expect(throws: SignetError(.transportFailure, "")) { try await relyingParty.exchangeCode("c", pending: pending) }
        await provider.setTokenAnswer(HTTPTransportResponse(status: 404))
        await #expect(throws: SignetError(.malformedMessage, "")) { try await relyingParty.exchangeCode("c", pending: pending) }
        await provider.setTokenAnswer(HTTPTransportResponse(status: 200, body: Data(#"{"access_token":"x"}"#.utf8)))
        await #expect(throws: SignetError(.malformedMessage, "")) { try await relyingParty.exchangeCode("c", pending: pending) }
    }

    @Test("A token type other than Bearer is refused (RFC 6749 §7.1)")
    func tokenType() async throws {
        let provider = FakeProvider()
        try await provider.answerTokens(
            TokenResponse(accessToken: "at", tokenType: "mac", expiresIn: 60, refreshToken: nil, idToken: nil, scope: nil))
        await #expect(throws: SignetError(.malformedMessage, "")) { try await makeRelyingParty(provider).exchangeCode("c", pending: pending) }
    }

    @Test("A refresh sends grant_type=refresh_token with the token and the narrowed scope")
    func refresh() async throws {
        let provider = FakeProvider()
        try await provider.answerTokens(tokens)
        #expect(try await makeRelyingParty(provider).refresh("rt-1", scope: "openid") == tokens)
        let body = try #require(form(await provider.last("/token")))
        #expect(body["grant_type"] == "refresh_token")
        #expect(body["refresh_token"] == "rt-1")
        #expect(body["scope"] == "openid")
        #expect(body["code_verifier"] == nil)
    }

    @Test("Revocation posts the token and hint to the revocation endpoint with client authentication")
    func revoke() async throws {
        let provider = FakeProvider()
        try await makeRelyingParty(provider, authentication: .clientSecretPost("s")).revoke("rt-1", hint: "refresh_token")
        let body = try #require(form(await provider.last("/revoke")))
        #expect(body["token"] == "rt-1")
        #expect(body["token_type_hint"] == "refresh_token")
        #expect(body["client_secret"] == "s")

        // A client assertion sent to the revocation endpoint also names the issuer, not the endpoint.
        let clientKey = P256.Signing.PrivateKey()
        try await makeRelyingParty(provider, authentication: .privateKeyJWT(privateKey: clientKey, keyID: "k")).revoke("rt-2")
        let assertion = try #require(form(await provider.last("/revoke"))?["client_assertion"])
        #expect(try await JWTKeyCollection().unverified(assertion, as: ClientAssertionClaims.self).aud == FakeProvider.issuer)

        await provider.setRevocationAnswer(HTTPTransportResponse(status: 400, body: Data(#"{"error":"unsupported_token_type"}"#.utf8)))
        let error = await #expect(throws: SignetError.self) { try await makeRelyingParty(provider).revoke("x") }
        #expect(error?.oauthError?.error == .unsupportedTokenType)
    }

    @Test("Client secrets and keys never print")
    func redaction() {
        let basic = ClientAuthentication.clientSecretBasic("hunter2")
        let key = ClientAuthentication.privateKeyJWT(privateKey: P256.Signing.PrivateKey(), keyID: "k1")
        var dumped = ""
        dump(basic, to: &dumped)
        #expect(!"\(basic)".contains("hunter2") && !dumped.contains("hunter2"))
        #expect(!String(reflecting: ClientAuthentication.clientSecretPost("hunter2")).contains("hunter2"))
        #expect("\(key)" == "private_key_jwt(kid: k1, key: ****)")
    }
}
