// Pushed authorization requests (RFC 9126) end to end: the relying-party kit pushes, the app
// carries only client_id and request_uri, and every misuse of a request_uri is refused.
import Crypto
import Foundation
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer
import SignetStorage
import SignetTesting
import Testing

@Suite("PAR: pushed authorization requests")
struct PushedAuthorizationTests {
    /// A private_key_jwt backend registered in `provider`, and its kit.
    func backend(_ provider: TestProvider, requirePAR: Bool = true) async throws -> RelyingParty {
        let key = ClientKeyPair()
        var new = SignetAdmin.NewClient(
            id: "service", name: "Service", authMethod: .privateKeyJWT, redirectURIs: ["com.example.service:/cb"], jwks: key.publicJWKS)
        new.requirePushedAuthorizationRequests = requirePAR
        _ = try await provider.admin.addClient(new)
        _ = try await provider.admin.addUser(username: "bob", password: "a long passphrase", name: "Bob")
        let clock = provider.clock
        return RelyingParty(
            configuration: RelyingPartyConfiguration(
                issuer: provider.issuer, clientID: "service", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID)),
            now: { clock.now })
    }

    /// POSTs the sign-in form of `page` as bob.
    func signIn(_ provider: TestProvider, _ browser: ScriptedBrowser, page: ScriptedResponse) async throws -> ScriptedResponse {
        let fields = try #require(LoginForm.fields(in: page.body))
        return try await browser.post(
            provider.url("/login"),
            form: [("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "bob"), ("password", "a long passphrase")])
    }

    @Test("the kit pushes the request; the app's URL holds only client_id and request_uri; the flow completes", arguments: EndToEndStore.available)
    func pushedFlow(_ kind: EndToEndStore) async throws {
        let store = try await kind.open()
        defer { Task { try? await store.close() } }
        try await withTestProvider(store: store) { provider in
            let relyingParty = try await backend(provider)
            let request = try await relyingParty.pushAuthorizationRequest(
                redirectURI: "com.example.service:/cb", scope: "openid profile", acrValues: AssuranceLevel.oneFactor)
            let query = try #require(FormParameters(encoded: request.url.query ?? ""))
            #expect(Set(query.pairs.map(\.name)) == ["client_id", "request_uri"])
            #expect(query["request_uri"]?.hasPrefix("urn:ietf:params:oauth:request_uri:") == true)
            let browser = ScriptedBrowser()
            let page = try await browser.get(request.url.absoluteString)
            #expect(page.status == 200)
            let login = try await signIn(provider, browser, page: page)
            let redirect = try #require(login.header("Location").flatMap(URL.init(string:)))
            let completed = try await relyingParty.completeAuthorization(redirect: redirect, pending: request.pending)
            #expect(completed.idToken.acr == AssuranceLevel.oneFactor)
            // Used once: the same URL again is refused, and never redirected.
            let again = try await ScriptedBrowser().get(request.url.absoluteString)
            #expect(again.status == 400)
            #expect(again.header("Location") == nil)
            #expect(again.body.contains("invalid_request_uri"))
        }
    }

    @Test(
        "an OpenID Connect client may repeat pushed parameters beside the request_uri; a differing one is refused and spends nothing",
        arguments: EndToEndStore.available)
    func repeatedParameters(_ kind: EndToEndStore) async throws {
        let store = try await kind.open()
        defer { Task { try? await store.close() } }
        try await withTestProvider(store: store) { provider in
            let relyingParty = try await backend(provider)
            let request = try await relyingParty.pushAuthorizationRequest(redirectURI: "com.example.service:/cb", scope: "openid profile")
            let reference = try #require(FormParameters(encoded: request.url.query ?? ""))
            let base = provider.url("/authorize?")
            // OIDC Core §6.2: response_type, scope and redirect_uri sent again, as the pushed ones.
            let repeated: [(name: String, value: String)] = [
                ("response_type", "code"), ("scope", "openid profile"), ("redirect_uri", "com.example.service:/cb"),
            ]
            func url(_ pairs: [(name: String, value: String)]) -> String { base + FormParameters(reference.pairs + pairs).encoded }
            let refusals: [[(name: String, value: String)]] = [
                [("response_type", "code"), ("scope", "openid"), ("redirect_uri", "com.example.service:/cb")],
                [("response_type", "code"), ("scope", "openid profile"), ("redirect_uri", "com.example.service:/other")],
                [("response_type", "token")],
                [("scope", "")],
                // Not pushed at all, or sent twice.
                repeated + [("prompt", "login")],
                [("scope", "openid profile"), ("scope", "openid profile")],
            ]
            for pairs in refusals {
                let refused = try await ScriptedBrowser().get(url(pairs))
                #expect(refused.status == 400, "\(pairs)")
                #expect(refused.header("Location") == nil)
                #expect(refused.body.contains("invalid_request"), "\(refused.body)")
                #expect(!refused.body.contains("invalid_request_uri"), "\(refused.body)")
            }
            // The refusals changed nothing: the request_uri still signs the user in, with the pushed values.
            let browser = ScriptedBrowser()
            let page = try await browser.get(url(repeated))
            #expect(page.status == 200)
            let login = try await signIn(provider, browser, page: page)
            let redirect = try #require(login.header("Location").flatMap(URL.init(string:)))
            let completed = try await relyingParty.completeAuthorization(redirect: redirect, pending: request.pending)
            #expect(completed.tokens.scope.map { Set($0.split(separator: " ")) } == ["openid", "profile"])
            // Spent by that use, with or without the repeated parameters.
            for again in [url(repeated), request.url.absoluteString] {
                #expect(try await ScriptedBrowser().get(again).body.contains("invalid_request_uri"))
            }
        }
    }

    @Test("a client that must push cannot send its parameters in the URL, nor use the native login start")
    func requiredPush() async throws {
        try await withTestProvider { provider in
            let relyingParty = try await backend(provider)
            let direct = try await relyingParty.makeAuthorizationRequest(redirectURI: "com.example.service:/cb")
            let answer = try await ScriptedBrowser().get(direct.url.absoluteString)
            #expect(answer.locationParameters?["error"] == "invalid_request")
            #expect(answer.locationParameters?["code"] == nil)
            try await provider.admin.updateClient(id: "service", .init(nativeLogin: true))
            let native = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"),
                body: String(
                    decoding: try JSONSerialization.data(
                        withJSONObject: Dictionary(
                            uniqueKeysWithValues: FormParameters(encoded: direct.url.query ?? "")!.pairs.map { ($0.name, $0.value) })), as: UTF8.self),
                headers: [("Content-Type", "application/json")])
            #expect(native.oauthError == "invalid_request")
        }
    }

    @Test("a request_uri expires after 60 s, belongs to its client, and takes no parameter it was not pushed with")
    func requestURIRules() async throws {
        try await withTestProvider { provider in
            let relyingParty = try await backend(provider)
            _ = try await provider.admin.addClient(.init(id: "other", name: "Other", authMethod: .none, redirectURIs: ["com.example.other:/cb"]))

            let expired = try await relyingParty.pushAuthorizationRequest(redirectURI: "com.example.service:/cb")
            provider.clock.advance(by: 61)
            #expect(try await ScriptedBrowser().get(expired.url.absoluteString).body.contains("invalid_request_uri"))

            let stolen = try await relyingParty.pushAuthorizationRequest(redirectURI: "com.example.service:/cb")
            let uri = try #require(FormParameters(encoded: stolen.url.query ?? "")?["request_uri"])
            let base = provider.url("/authorize?")
            let otherClient = try await ScriptedBrowser().get(base + FormParameters([("client_id", "other"), ("request_uri", uri)]).encoded)
            #expect(otherClient.status == 400)
            #expect(otherClient.body.contains("invalid_request_uri"))
            // The refusal consumed it: the rightful client cannot use it either now.
            #expect(try await ScriptedBrowser().get(stolen.url.absoluteString).body.contains("invalid_request_uri"))

            let extra = try await relyingParty.pushAuthorizationRequest(redirectURI: "com.example.service:/cb")
            let extraURI = try #require(FormParameters(encoded: extra.url.query ?? "")?["request_uri"])
            let withState = try await ScriptedBrowser().get(
                base + FormParameters([("client_id", "service"), ("request_uri", extraURI), ("state", "mine")]).encoded)
            #expect(withState.status == 400)
            #expect(withState.header("Location") == nil)
            let noClient = try await ScriptedBrowser().get(base + FormParameters([("request_uri", extraURI)]).encoded)
            #expect(noClient.status == 400)
            let madeUp = try await ScriptedBrowser().get(
                base + FormParameters([("client_id", "service"), ("request_uri", "urn:ietf:params:oauth:request_uri:nope")]).encoded)
            #expect(madeUp.body.contains("invalid_request_uri"))
        }
    }

    @Test("/par checks client authentication and the request as /authorize does, and refuses a request_uri inside")
    func endpointRefusals() async throws {
        try await withTestProvider { provider in
            _ = try await backend(provider)
            let authorization = TestAuthorization(clientID: "service", redirectURI: "com.example.service:/cb")
            // No client authentication for a private_key_jwt client.
            let anonymous = try await ScriptedBrowser().post(provider.url("/par"), form: authorization.parameters())
            #expect(anonymous.status == 401)
            #expect(anonymous.oauthError == "invalid_client")
            // A public client may push with its client_id; the same rules apply.
            _ = try await provider.admin.addClient(.init(id: "app", name: "App", authMethod: .none, redirectURIs: ["com.example.app:/cb"]))
            let app = TestAuthorization(clientID: "app", redirectURI: "com.example.app:/cb")
            let pushed = try await ScriptedBrowser().post(provider.url("/par"), form: app.parameters())
            #expect(pushed.status == 201)
            #expect((pushed.json["expires_in"] as? Int) == 60)
            let noPKCE = try await ScriptedBrowser().post(
                provider.url("/par"), form: app.parameters(omit: ["code_challenge", "code_challenge_method"]))
            #expect(noPKCE.status == 400)
            #expect(noPKCE.oauthError == "invalid_request")
            let badScope = try await ScriptedBrowser().post(
                provider.url("/par"), form: app.parameters(extra: [("scope", "openid admin")], omit: ["scope"]))
            #expect(badScope.oauthError == "invalid_scope")
            let nested = try await ScriptedBrowser().post(
                provider.url("/par"), form: app.parameters(extra: [("request_uri", "urn:ietf:params:oauth:request_uri:x")]))
            #expect(nested.oauthError == "invalid_request")
            let wrongRedirect = try await ScriptedBrowser().post(
                provider.url("/par"), form: app.parameters(extra: [("redirect_uri", "com.example.app:/other")], omit: ["redirect_uri"]))
            #expect(wrongRedirect.oauthError == "invalid_request")
            let get = try await ScriptedBrowser().get(provider.url("/par"))
            #expect(get.status == 405)
            let discovery = try await ScriptedBrowser().get(provider.url("/.well-known/openid-configuration"))
            #expect(discovery.json["pushed_authorization_request_endpoint"] as? String == provider.url("/par"))
            #expect(discovery.json["require_pushed_authorization_requests"] as? Bool == false)
        }
    }

    @Test("50 parallel uses of one request_uri: exactly one login page", arguments: EndToEndStore.available)
    func singleUseUnderRace(_ kind: EndToEndStore) async throws {
        let store = try await kind.open()
        defer { Task { try? await store.close() } }
        try await withTestProvider(store: store) { provider in
            let relyingParty = try await backend(provider)
            let request = try await relyingParty.pushAuthorizationRequest(redirectURI: "com.example.service:/cb")
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { try await ScriptedBrowser().get(request.url.absoluteString).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 400 }.count == 49)
        }
    }

    @Test("the server-wide switch makes every client push")
    func serverWide() async throws {
        try await withTestProvider(configure: { $0.requirePushedAuthorizationRequests = true }) { provider in
            let relyingParty = try await backend(provider, requirePAR: false)
            let direct = try await relyingParty.makeAuthorizationRequest(redirectURI: "com.example.service:/cb")
            #expect(try await ScriptedBrowser().get(direct.url.absoluteString).locationParameters?["error"] == "invalid_request")
            let pushed = try await relyingParty.pushAuthorizationRequest(redirectURI: "com.example.service:/cb")
            #expect(try await ScriptedBrowser().get(pushed.url.absoluteString).status == 200)
            let discovery = try await ScriptedBrowser().get(provider.url("/.well-known/openid-configuration"))
            #expect(discovery.json["require_pushed_authorization_requests"] as? Bool == true)
        }
    }
}

@Suite("FAPI 2.0 through the kit: a fapi2 client with PAR + signed request + private_key_jwt + DPoP")
struct FAPIShapeTests {
    @Test(
        "the backend pushes a signed request with a DPoP proof, the app carries only the request_uri, and every token is bound",
        arguments: EndToEndStore.available)
    func fapiFlow(_ kind: EndToEndStore) async throws {
        let store = try await kind.open()
        defer { Task { try? await store.close() } }
        // With server-provided DPoP nonces too: the kit retries once with the nonce it is given.
        try await withTestProvider(store: store, configure: { $0.dpopNonces = true }) { provider in
            let key = ClientKeyPair()
            var new = SignetAdmin.NewClient(
                id: "bank", name: "Bank", authMethod: .privateKeyJWT, redirectURIs: ["https://bank.example.com/cb"], jwks: key.publicJWKS)
            new.fapi2 = true
            new.requireSignedRequestObject = true
            _ = try await provider.admin.addClient(new)
            let user = try await provider.admin.addUser(username: "bob", password: "a long passphrase")
            let clock = provider.clock
            let bank = RelyingParty(
                configuration: RelyingPartyConfiguration(
                    issuer: provider.issuer, clientID: "bank", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID),
                    dpopKey: P256.Signing.PrivateKey()),
                now: { clock.now })
            let request = try await bank.pushAuthorizationRequest(redirectURI: "https://bank.example.com/cb", scope: "openid profile", signed: true)
            let browser = ScriptedBrowser()
            let page = try await browser.get(request.url.absoluteString)
            let fields = try #require(LoginForm.fields(in: page.body))
            let login = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "bob"), ("password", "a long passphrase"),
                ])
            let redirect = try #require(login.header("Location").flatMap(URL.init(string:)))
            let completed = try await bank.completeAuthorization(redirect: redirect, pending: request.pending)
            #expect(completed.idToken.sub == user.id)
            #expect(completed.tokens.tokenType == "DPoP")
            #expect(try await bank.userInfo(accessToken: completed.tokens.accessToken, expectedSubject: user.id).sub == user.id)
            // Any resource through the kit: the DPoP scheme and a proof with ath (the provider's UserInfo here).
            let resource = try await bank.send(
                HTTPTransportRequest(method: "GET", url: provider.url("/userinfo")), accessToken: completed.tokens.accessToken)
            #expect(resource.status == 200)
            let bearerOnly = RelyingParty(
                configuration: RelyingPartyConfiguration(
                    issuer: provider.issuer, clientID: "bank", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID)),
                now: { clock.now })
            #expect(
                try await bearerOnly.send(
                    HTTPTransportRequest(method: "GET", url: provider.url("/userinfo")), accessToken: completed.tokens.accessToken
                ).status == 401)
            let refreshToken = try #require(completed.tokens.refreshToken)
            let refreshed = try await bank.refresh(refreshToken)
            #expect(refreshed.tokenType == "DPoP")
            // FAPI 2.0: not rotated, so the same refresh token works again.
            #expect(refreshed.refreshToken == nil)
            #expect(try await bank.refresh(refreshToken).tokenType == "DPoP")
            // Without its DPoP key the bank gets nothing.
            let keyless = RelyingParty(
                configuration: RelyingPartyConfiguration(
                    issuer: provider.issuer, clientID: "bank", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID)),
                now: { clock.now })
            await #expect(throws: SignetError.self) { _ = try await keyless.refresh(refreshToken) }
        }
    }

    @Test("50 parallel requests with one DPoP proof: exactly one is served, on every store", arguments: EndToEndStore.available)
    func oneProofOnce(_ kind: EndToEndStore) async throws {
        let store = try await kind.open()
        defer { Task { try? await store.close() } }
        try await withTestProvider(store: store) { provider in
            let key = ClientKeyPair()
            _ = try await provider.admin.addClient(
                .init(id: "svc", name: "Service", authMethod: .privateKeyJWT, redirectURIs: ["https://svc.example.com/cb"], jwks: key.publicJWKS))
            _ = try await provider.admin.addUser(username: "carol", password: "a long passphrase")
            let dpopKey = P256.Signing.PrivateKey()
            let clock = provider.clock
            let service = RelyingParty(
                configuration: RelyingPartyConfiguration(
                    issuer: provider.issuer, clientID: "svc", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID),
                    dpopKey: dpopKey),
                now: { clock.now })
            let request = try await service.makeAuthorizationRequest(redirectURI: "https://svc.example.com/cb", scope: "openid")
            let browser = ScriptedBrowser()
            let page = try await browser.get(request.url.absoluteString)
            let fields = try #require(LoginForm.fields(in: page.body))
            let answer = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "carol"),
                    ("password", "a long passphrase"),
                ])
            let completed = try await service.completeAuthorization(
                redirect: try #require(answer.header("Location").flatMap(URL.init(string:))), pending: request.pending)
            let accessToken = completed.tokens.accessToken
            let userinfo = provider.url("/userinfo")
            let jwk = PublicJWK(p256: dpopKey.publicKey, kid: "")
            let proof = try TestJWS.es256(
                header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": ["kty": "EC", "crv": "P-256", "x": jwk.x ?? "", "y": jwk.y ?? ""]],
                claims: [
                    "htm": "GET", "htu": userinfo, "iat": Int(clock.now.timeIntervalSince1970), "jti": UUID().uuidString,
                    "ath": Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString(),
                ], key: dpopKey)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await ScriptedBrowser().get(userinfo, headers: [("Authorization", "DPoP \(accessToken)"), ("DPoP", proof)]).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 401 }.count == 49)
        }
    }
}
