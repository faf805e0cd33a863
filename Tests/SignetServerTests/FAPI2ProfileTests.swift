// The FAPI 2.0 Security Profile for clients flagged fapi2 (docs/fapi2.md).
import Crypto
import CryptoExtras
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing

/// A P-384 key: ES384 is an algorithm Signet accepts in general and FAPI 2.0 (§5.4) does not.
struct P384TestKey {
    let key = P384.Signing.PrivateKey()
    let kid = "p384"

    var publicJWK: [String: Any] {
        let raw = key.publicKey.rawRepresentation
        return ["kty": "EC", "crv": "P-384", "x": raw.prefix(48).base64URLEncodedString(), "y": raw.suffix(48).base64URLEncodedString()]
    }

    func es384(header: [String: Any], claims: [String: Any]) throws -> String {
        let input =
            try JSONSerialization.data(withJSONObject: header, options: .sortedKeys).base64URLEncodedString() + "."
            + JSONSerialization.data(withJSONObject: claims, options: .sortedKeys).base64URLEncodedString()
        return input + "." + (try key.signature(for: Data(input.utf8))).rawRepresentation.base64URLEncodedString()
    }
}

@Suite("FAPI 2.0: what the fapi2 flag turns on")
struct FAPI2ProfileTests {
    static let redirect = "https://bank.example.com/cb"

    /// A FAPI 2.0 client "bank" (P-256 and P-384 keys registered) and a plain client "legacy" with the same keys.
    struct Bank {
        let provider: TestProvider
        let key = ClientKeyPair()
        let p384 = P384TestKey()
        let user: UserRecord
        let password = "a long passphrase"

        init(_ provider: TestProvider) async throws {
            self.provider = provider
            user = try await provider.admin.addUser(username: "bob", password: password)
            var keys =
                try #require(try JSONSerialization.jsonObject(with: Data(key.publicJWKS.utf8)) as? [String: Any])["keys"] as? [[String: Any]] ?? []
            keys.append(p384.publicJWK.merging(["kid": p384.kid]) { $1 })
            let jwks = String(decoding: try JSONSerialization.data(withJSONObject: ["keys": keys]), as: UTF8.self)
            var bank = SignetAdmin.NewClient(id: "bank", name: "Bank", authMethod: .privateKeyJWT, redirectURIs: [Self.redirect], jwks: jwks)
            bank.fapi2 = true
            _ = try await provider.admin.addClient(bank)
            _ = try await provider.admin.addClient(
                .init(id: "legacy", name: "Legacy", authMethod: .privateKeyJWT, redirectURIs: [Self.redirect], jwks: jwks))
        }

        static let redirect = FAPI2ProfileTests.redirect

        func assertion(client: String = "bank", audience: String? = nil) throws -> [(String, String)] {
            TestJWS.assertionFields(
                try TestJWS.clientAssertion(key, clientID: client, audience: audience ?? provider.issuer, now: provider.clock.now))
        }

        func es384Assertion(client: String) throws -> [(String, String)] {
            let now = Int(provider.clock.now.timeIntervalSince1970)
            let claims: [String: Any] = ["iss": client, "sub": client, "aud": provider.issuer, "iat": now, "exp": now + 60, "jti": UUID().uuidString]
            return TestJWS.assertionFields(try p384.es384(header: ["alg": "ES384", "kid": p384.kid, "typ": "JWT"], claims: claims))
        }

        /// Pushes `authorization` and returns the PAR response.
        func push(
            _ authorization: TestAuthorization, auth: [(String, String)]? = nil, extra: [(String, String)] = [], headers: [(String, String)] = []
        ) async throws -> ScriptedResponse {
            try await ScriptedBrowser().post(
                provider.url("/par"), form: authorization.parameters(extra: extra) + (try auth ?? assertion()), headers: headers)
        }

        /// Pushes, signs bob in through the page, and returns the code.
        func code(_ authorization: TestAuthorization) async throws -> String {
            let pushed = try await push(authorization)
            let uri = try #require(pushed.json["request_uri"] as? String, "\(pushed.body)")
            let browser = ScriptedBrowser()
            let page = try await browser.get(
                provider.url("/authorize?") + FormParameters([("client_id", authorization.clientID), ("request_uri", uri)]).encoded)
            let fields = try #require(LoginForm.fields(in: page.body))
            let login = try await browser.post(
                provider.url("/login"),
                form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "bob"), ("password", password)])
            return try #require(login.locationParameters?["code"])
        }

        func proof(_ dpop: DPoPKey, _ path: String = "/token") throws -> [(String, String)] {
            [("DPoP", try dpop.proof("POST", provider.url(path), at: provider.clock.now))]
        }
    }

    @Test("registration: only a private_key_jwt client with https redirect URIs can be FAPI 2.0, and a refused update changes nothing")
    func registration() async throws {
        try await withTestProvider { provider in
            let key = ClientKeyPair()
            var publicApp = SignetAdmin.NewClient(id: "app", name: "App", authMethod: .none, redirectURIs: ["com.example.app:/cb"])
            publicApp.fapi2 = true
            await #expect(throws: SignetError.self) { _ = try await provider.admin.addClient(publicApp) }
            var secret = SignetAdmin.NewClient(id: "secret", name: "Secret", authMethod: .clientSecretBasic, redirectURIs: [Self.redirect])
            secret.fapi2 = true
            await #expect(throws: SignetError.self) { _ = try await provider.admin.addClient(secret) }
            var loopback = SignetAdmin.NewClient(
                id: "loop", name: "Loop", authMethod: .privateKeyJWT, redirectURIs: ["http://127.0.0.1/cb"], jwks: key.publicJWKS)
            loopback.fapi2 = true
            await #expect(throws: SignetError.self) { _ = try await provider.admin.addClient(loopback) }
            #expect(try await provider.store.client(id: "app") == nil)
            #expect(try await provider.store.client(id: "loop") == nil)

            var bank = SignetAdmin.NewClient(
                id: "bank", name: "Bank", authMethod: .privateKeyJWT, redirectURIs: [Self.redirect], jwks: key.publicJWKS)
            bank.fapi2 = true
            let (record, _) = try await provider.admin.addClient(bank)
            #expect(record.fapi2 && record.mustPushRequests && record.mustUseDPoP && !record.rotatesRefreshTokens)
            #expect(try await provider.store.client(id: "bank")?.fapi2 == true)

            publicApp.fapi2 = false
            _ = try await provider.admin.addClient(publicApp)
            await #expect(throws: SignetError.self) { try await provider.admin.updateClient(id: "app", .init(name: "Renamed", fapi2: true)) }
            let unchanged = try #require(try await provider.store.client(id: "app"))
            #expect(!unchanged.fapi2 && unchanged.name == "App")
        }
    }

    @Test("§5.3.2.2: a FAPI 2.0 client's requests must be pushed; /authorize with plain parameters is refused back to the client")
    func pushedOnly() async throws {
        try await withTestProvider { provider in
            let bank = try await Bank(provider)
            let authorization = TestAuthorization(clientID: "bank", redirectURI: Self.redirect)
            let plain = try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer))
            #expect(plain.status == 302)
            #expect(plain.locationParameters?["error"] == "invalid_request")
            #expect(plain.locationParameters?["state"] == authorization.state)
            // The same request is fine for the plain client.
            #expect(
                try await ScriptedBrowser().get(TestAuthorization(clientID: "legacy", redirectURI: Self.redirect).url(issuer: provider.issuer)).status
                    == 200)
            #expect(try await bank.push(authorization).status == 201)
        }
    }

    @Test("§5.3.2.1: a FAPI 2.0 client's assertion must name the issuer as its aud; the token or PAR endpoint URL is refused")
    func assertionAudience() async throws {
        try await withTestProvider { provider in
            let bank = try await Bank(provider)
            let authorization = TestAuthorization(clientID: "bank", redirectURI: Self.redirect)
            for audience in [provider.url("/token"), provider.url("/par")] {
                let refused = try await bank.push(authorization, auth: try bank.assertion(audience: audience))
                #expect(refused.status == 401)
                #expect(refused.oauthError == "invalid_client")
                // A plain client may still name the endpoint (RFC 7523 §3).
                #expect(
                    try await bank.push(
                        TestAuthorization(clientID: "legacy", redirectURI: Self.redirect),
                        auth: try bank.assertion(client: "legacy", audience: audience)
                    ).status == 201)
            }
            #expect(try await bank.push(authorization, auth: try bank.assertion(audience: provider.issuer)).status == 201)
        }
    }

    @Test("§5.4: ES384 client assertions, request objects and DPoP proofs are refused for a FAPI 2.0 client and accepted for a plain one")
    func algorithms() async throws {
        try await withTestProvider { provider in
            let bank = try await Bank(provider)
            let authorization = TestAuthorization(clientID: "bank", redirectURI: Self.redirect)
            let legacyAuthorization = TestAuthorization(clientID: "legacy", redirectURI: Self.redirect)

            let assertion = try await bank.push(authorization, auth: try bank.es384Assertion(client: "bank"))
            #expect(assertion.status == 401)
            #expect(assertion.oauthError == "invalid_client")
            #expect(try await bank.push(legacyAuthorization, auth: try bank.es384Assertion(client: "legacy")).status == 201)

            func requestObject(_ client: String, _ authorization: TestAuthorization) throws -> String {
                let now = Int(provider.clock.now.timeIntervalSince1970)
                var claims: [String: Any] = [
                    "iss": client, "aud": provider.issuer, "iat": now, "nbf": now, "exp": now + 300, "jti": UUID().uuidString,
                ]
                for (name, value) in authorization.parameters() { claims[name] = value }
                return try bank.p384.es384(header: ["alg": "ES384", "kid": bank.p384.kid, "typ": "oauth-authz-req+jwt"], claims: claims)
            }
            let signed = try await ScriptedBrowser().post(
                provider.url("/par"), form: [("client_id", "bank"), ("request", try requestObject("bank", authorization))] + (try bank.assertion()))
            #expect(signed.status == 400)
            #expect(signed.oauthError == "invalid_request_object")
            let legacySigned = try await ScriptedBrowser().post(
                provider.url("/par"),
                form: [("client_id", "legacy"), ("request", try requestObject("legacy", legacyAuthorization))]
                    + (try bank.assertion(client: "legacy")))
            #expect(legacySigned.status == 201, "\(legacySigned.body)")

            // A DPoP proof signed with ES384 by a P-384 key.
            func es384Proof(_ path: String) throws -> String {
                let now = Int(provider.clock.now.timeIntervalSince1970)
                return try bank.p384.es384(
                    header: ["typ": "dpop+jwt", "alg": "ES384", "jwk": bank.p384.publicJWK],
                    claims: ["htm": "POST", "htu": provider.url(path), "iat": now, "jti": UUID().uuidString])
            }
            let atPAR = try await bank.push(authorization, headers: [("DPoP", try es384Proof("/par"))])
            #expect(atPAR.status == 400)
            #expect(atPAR.oauthError == "invalid_dpop_proof")
            let code = try await bank.code(authorization)
            let atToken = try await provider.redeem(
                code, authorization, clientAuth: try bank.assertion(), headers: [("DPoP", try es384Proof("/token"))])
            #expect(atToken.oauthError == "invalid_dpop_proof")
            // Refused before the code was spent: the right proof still redeems it.
            #expect(
                try await provider.redeem(code, authorization, clientAuth: try bank.assertion(), headers: try bank.proof(DPoPKey())).status == 200)
        }
    }

    @Test("§5.3.2.1: only sender-constrained tokens — no proof, no token, and the code survives the refusal", arguments: [false, true])
    func dpopRequired(dpopNonces: Bool) async throws {
        try await withTestProvider(configure: { $0.dpopNonces = dpopNonces }) { provider in
            let bank = try await Bank(provider)
            let authorization = TestAuthorization(clientID: "bank", redirectURI: Self.redirect)
            let code = try await bank.code(authorization)
            let bearer = try await provider.redeem(code, authorization, clientAuth: try bank.assertion())
            #expect(bearer.status == 400)
            // With server nonces on too: a missing proof is not a proof without a nonce (RFC 9449 §8).
            #expect(bearer.oauthError == "invalid_dpop_proof")
            guard !dpopNonces else { return }
            let dpop = DPoPKey()
            let bound = try await provider.redeem(code, authorization, clientAuth: try bank.assertion(), headers: try bank.proof(dpop))
            #expect(bound.status == 200, "\(bound.body)")
            #expect(try bound.decode(TokenResponse.self).tokenType == "DPoP")
        }
    }

    /// Bob signed in to the FAPI 2.0 client `bank`, with the DPoP-bound refresh token it got.
    struct BankRefresh {
        let provider: TestProvider
        let bank: Bank
        let dpop: DPoPKey
        let refreshToken: String

        static func make(_ provider: TestProvider) async throws -> BankRefresh {
            let bank = try await Bank(provider)
            let dpop = DPoPKey()
            let authorization = TestAuthorization(clientID: "bank", redirectURI: FAPI2ProfileTests.redirect, scope: "openid offline_access")
            let code = try await bank.code(authorization)
            let tokens = try await provider.redeem(code, authorization, clientAuth: try bank.assertion(), headers: try bank.proof(dpop)).decode(
                TokenResponse.self)
            return BankRefresh(provider: provider, bank: bank, dpop: dpop, refreshToken: try #require(tokens.refreshToken))
        }

        /// A refresh with the token, with a DPoP proof unless `proof` is false.
        func refresh(proof: Bool = true) async throws -> ScriptedResponse {
            try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)] + (try bank.assertion()),
                headers: proof ? try bank.proof(dpop) : [])
        }
    }

    @Test(
        "§5.3.2.1: a FAPI 2.0 client's refresh token is not rotated: it works again (a lost answer can be retried), needs a proof, and dies with its grant"
    )
    func refreshWithoutRotation() async throws {
        try await withTestProvider { provider in
            let signedIn = try await BankRefresh.make(provider)
            let (bank, refreshToken) = (signedIn.bank, signedIn.refreshToken)
            func refresh(proof: Bool = true) async throws -> ScriptedResponse { try await signedIn.refresh(proof: proof) }
            let first = try await refresh()
            #expect(first.status == 200, "\(first.body)")
            let refreshed = try first.decode(TokenResponse.self)
            #expect(refreshed.refreshToken == nil)
            #expect(refreshed.tokenType == "DPoP")
            #expect(try await refresh().status == 200)
            #expect(try await refresh(proof: false).oauthError == "invalid_dpop_proof")
            // Revoking the refresh token (RFC 7009) ends it.
            let revoked = try await ScriptedBrowser().post(provider.url("/revoke"), form: [("token", refreshToken)] + (try bank.assertion()))
            #expect(revoked.status == 200)
            #expect(try await refresh().oauthError == "invalid_grant")
        }
    }

    @Test("a FAPI 2.0 client's unrotated refresh token stops working once its user is locked, even without the usual revocation")
    func unrotatedRefreshOfLockedUser() async throws {
        try await withTestProvider { provider in
            let signedIn = try await BankRefresh.make(provider)
            func refresh() async throws -> ScriptedResponse { try await signedIn.refresh() }
            #expect(try await refresh().status == 200)
            // Locked as if the lock's revocation had not happened: the user read for the refresh refuses it.
            var bob = try #require(try await provider.store.user(username: "bob"))
            bob.locked = true
            #expect(try await provider.store.replaceUser(bob, expectedStamp: bob.securityStamp))
            let refused = try await refresh()
            #expect(refused.status == 400 && refused.oauthError == "invalid_grant", "\(refused.body)")
            #expect(refused.body.contains("sign-in was revoked"), "\(refused.body)")
        }
    }

    @Test("the same request from a plain client still rotates its refresh tokens")
    func plainClientRotates() async throws {
        try await withTestProvider { provider in
            let bank = try await Bank(provider)
            let authorization = TestAuthorization(clientID: "legacy", redirectURI: Self.redirect, scope: "openid offline_access")
            let code = try await provider.signIn(authorization, username: "bob", password: bank.password)
            let tokens = try await provider.redeem(code, authorization, clientAuth: try bank.assertion(client: "legacy")).decode(TokenResponse.self)
            let refreshToken = try #require(tokens.refreshToken)
            let form: () throws -> [(String, String)] = {
                [("grant_type", "refresh_token"), ("refresh_token", refreshToken)] + (try bank.assertion(client: "legacy"))
            }
            let first = try await ScriptedBrowser().post(provider.url("/token"), form: try form())
            #expect(try first.decode(TokenResponse.self).refreshToken != nil)
            #expect(try await ScriptedBrowser().post(provider.url("/token"), form: try form()).oauthError == "invalid_grant")
        }
    }
}

/// An RSA key that signs DPoP proofs with PKCS #1 v1.5 (RS256) or PSS (PS256).
struct RSATestKey {
    let key: _RSA.Signing.PrivateKey

    init() throws { key = try _RSA.Signing.PrivateKey(keySize: .bits2048) }

    func publicJWK(alg: String? = nil) throws -> [String: Any] {
        let primitives = try key.publicKey.getKeyPrimitives()
        var jwk: [String: Any] = [
            "kty": "RSA", "n": primitives.modulus.base64URLEncodedString(), "e": primitives.publicExponent.base64URLEncodedString(),
        ]
        if let alg { jwk["alg"] = alg }
        return jwk
    }

    /// A DPoP proof whose header says `headerAlg`, signed with PSS when `pss`, else PKCS #1 v1.5.
    func proof(headerAlg: String, jwkAlg: String? = nil, pss: Bool, method: String = "POST", url: String, at date: Date, accessToken: String? = nil)
        throws -> String
    {
        var claims: [String: Any] = ["htm": method, "htu": url, "iat": Int(date.timeIntervalSince1970), "jti": UUID().uuidString]
        if let accessToken { claims["ath"] = Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString() }
        let header: [String: Any] = ["typ": "dpop+jwt", "alg": headerAlg, "jwk": try publicJWK(alg: jwkAlg)]
        let input =
            try JSONSerialization.data(withJSONObject: header, options: .sortedKeys).base64URLEncodedString() + "."
            + JSONSerialization.data(withJSONObject: claims, options: .sortedKeys).base64URLEncodedString()
        let signature = try key.signature(for: Data(input.utf8), padding: pss ? .PSS : .insecurePKCS1v1_5)
        return input + "." + signature.rawRepresentation.base64URLEncodedString()
    }
}

@Suite("DPoP proofs: the header's alg is the one the signature is checked with")
struct DPoPAlgorithmConfusionTests {
    @Test("a proof whose jwk names another alg than its header, or whose key does not fit the header's alg, is refused at /token for every client")
    func jwkAlgorithmMustMatchHeader() async throws {
        try await withTestProvider { provider in
            let bank = try await FAPI2ProfileTests.Bank(provider)
            let rsa = try RSATestKey()
            let token = provider.url("/token")
            let authorization = TestAuthorization(clientID: "legacy", redirectURI: FAPI2ProfileTests.redirect)
            let code = try await provider.signIn(authorization, username: "bob", password: bank.password)
            func redeem(_ proof: String) async throws -> ScriptedResponse {
                try await provider.redeem(code, authorization, clientAuth: try bank.assertion(client: "legacy"), headers: [("DPoP", proof)])
            }
            // Header PS256, key saying RS256, signed RS256: jwt-kit would verify with the key's alg.
            let confused = try await redeem(try rsa.proof(headerAlg: "PS256", jwkAlg: "RS256", pss: false, url: token, at: provider.clock.now))
            #expect(confused.oauthError == "invalid_dpop_proof")
            // Header ES256 over a P-384 key saying ES384, signed ES384.
            let now = Int(provider.clock.now.timeIntervalSince1970)
            let curve = try bank.p384.es384(
                header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": bank.p384.publicJWK.merging(["alg": "ES384"]) { $1 }],
                claims: ["htm": "POST", "htu": token, "iat": now, "jti": UUID().uuidString])
            #expect(try await redeem(curve).oauthError == "invalid_dpop_proof")
            // Header ES384 over a P-256 key without alg.
            let p256 = DPoPKey()
            #expect(
                try await redeem(try p256.proof("POST", token, at: provider.clock.now, header: ["alg": "ES384"])).oauthError == "invalid_dpop_proof")
            // The honest RS256 proof of a plain client still works (and the refusals did not spend the code).
            let honest = try await redeem(try rsa.proof(headerAlg: "RS256", jwkAlg: "RS256", pss: false, url: token, at: provider.clock.now))
            #expect(honest.status == 200, "\(honest.body)")
        }
    }

    @Test("§5.4 at /userinfo: a FAPI 2.0 client's token bound to an RSA key is refused with an RS256 proof and served with PS256")
    func fapiAlgorithmsAtUserInfo() async throws {
        try await withTestProvider { provider in
            let bank = try await FAPI2ProfileTests.Bank(provider)
            let rsa = try RSATestKey()
            let authorization = TestAuthorization(clientID: "bank", redirectURI: FAPI2ProfileTests.redirect)
            let code = try await bank.code(authorization)
            let response = try await provider.redeem(
                code, authorization, clientAuth: try bank.assertion(),
                headers: [("DPoP", try rsa.proof(headerAlg: "PS256", pss: true, url: provider.url("/token"), at: provider.clock.now))])
            #expect(response.status == 200, "\(response.body)")
            let accessToken = try response.decode(TokenResponse.self).accessToken
            let userinfo = provider.url("/userinfo")
            func call(pss: Bool) async throws -> ScriptedResponse {
                let proof = try rsa.proof(
                    headerAlg: pss ? "PS256" : "RS256", pss: pss, method: "GET", url: userinfo, at: provider.clock.now, accessToken: accessToken)
                return try await ScriptedBrowser().get(userinfo, headers: [("Authorization", "DPoP \(accessToken)"), ("DPoP", proof)])
            }
            let rs256 = try await call(pss: false)
            #expect(rs256.status == 401)
            #expect(rs256.header("WWW-Authenticate")?.contains("invalid_dpop_proof") == true)
            #expect(try await call(pss: true).status == 200)
        }
    }
}
