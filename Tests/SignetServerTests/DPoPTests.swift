// DPoP (RFC 9449): proofs at /token, /par and /userinfo; tokens and codes bound to a key.
import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing

/// A DPoP key pair that makes proofs.
struct DPoPKey {
    let key = P256.Signing.PrivateKey()

    var publicJWK: [String: Any] {
        let jwk = PublicJWK(p256: key.publicKey, kid: "")
        return ["kty": "EC", "crv": "P-256", "x": jwk.x ?? "", "y": jwk.y ?? ""]
    }
    var jkt: String { JWKThumbprint.sha256(of: publicJWK)! }

    func proof(
        _ method: String, _ url: String, at date: Date, accessToken: String? = nil, jti: String = UUID().uuidString, header: [String: Any] = [:],
        claims extra: [String: Any] = [:], signer: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        var claims: [String: Any] = ["htm": method, "htu": url, "iat": Int(date.timeIntervalSince1970), "jti": jti]
        if let accessToken { claims["ath"] = Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString() }
        for (name, value) in extra { claims[name] = value }
        let fullHeader = ["typ": "dpop+jwt", "alg": "ES256", "jwk": publicJWK].merging(header) { $1 }
        return try TestJWS.es256(header: fullHeader, claims: claims, key: signer ?? key)
    }
}

@Suite("DPoP: proof of possession")
struct DPoPTests {
    func signInBackend(_ provider: TestProvider, _ fixture: Fixture, extra: [(String, String)] = []) async throws -> (TestAuthorization, String) {
        let authorization = fixture.backendAuthorization
        return (
            authorization,
            try await provider.signIn(authorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password, extra: extra)
        )
    }

    func redeem(_ provider: TestProvider, _ fixture: Fixture, _ code: String, _ authorization: TestAuthorization, proof: String?) async throws
        -> ScriptedResponse
    {
        try await provider.redeem(code, authorization, clientAuth: try fixture.assertion(), headers: proof.map { [("DPoP", $0)] } ?? [])
    }

    @Test("a proof at /token binds the access token (cnf.jkt, token_type DPoP); /userinfo then wants the DPoP scheme and a proof of that key")
    func boundTokens() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let (authorization, code) = try await signInBackend(provider, fixture)
            let response = try await redeem(
                provider, fixture, code, authorization, proof: try dpop.proof("POST", provider.url("/token"), at: provider.clock.now))
            #expect(response.status == 200, "\(response.body)")
            let tokens = try response.decode(TokenResponse.self)
            #expect(tokens.tokenType == "DPoP")
            let payload = try #require(tokens.accessToken.split(separator: ".").dropFirst().first.flatMap { Data(base64URLEncoded: String($0)) })
            let claims = try JSONDecoder().decode(AccessTokenClaims.self, from: payload)
            #expect(claims.cnf?.jkt == dpop.jkt)

            let userinfo = provider.url("/userinfo")
            let good = try await ScriptedBrowser().get(
                userinfo,
                headers: [
                    ("Authorization", "DPoP \(tokens.accessToken)"),
                    ("DPoP", try dpop.proof("GET", userinfo, at: provider.clock.now, accessToken: tokens.accessToken)),
                ])
            #expect(good.status == 200, "\(good.body)")
            let asBearer = try await ScriptedBrowser().get(userinfo, headers: [("Authorization", "Bearer \(tokens.accessToken)")])
            #expect(asBearer.status == 401)
            #expect(asBearer.header("WWW-Authenticate")?.hasPrefix("DPoP ") == true)
            let noProof = try await ScriptedBrowser().get(userinfo, headers: [("Authorization", "DPoP \(tokens.accessToken)")])
            #expect(noProof.status == 401)
            let otherKey = try await ScriptedBrowser().get(
                userinfo,
                headers: [
                    ("Authorization", "DPoP \(tokens.accessToken)"),
                    ("DPoP", try DPoPKey().proof("GET", userinfo, at: provider.clock.now, accessToken: tokens.accessToken)),
                ])
            #expect(otherKey.status == 401)
            let noAth = try await ScriptedBrowser().get(
                userinfo,
                headers: [("Authorization", "DPoP \(tokens.accessToken)"), ("DPoP", try dpop.proof("GET", userinfo, at: provider.clock.now))])
            #expect(noAth.oauthError == "invalid_dpop_proof")
            let replayed = try dpop.proof("GET", userinfo, at: provider.clock.now, accessToken: tokens.accessToken)
            #expect(
                try await ScriptedBrowser().get(userinfo, headers: [("Authorization", "DPoP \(tokens.accessToken)"), ("DPoP", replayed)]).status
                    == 200)
            let again = try await ScriptedBrowser().get(userinfo, headers: [("Authorization", "DPoP \(tokens.accessToken)"), ("DPoP", replayed)])
            #expect(again.oauthError == "invalid_dpop_proof")
        }
    }

    @Test("hostile proofs at /token are refused with invalid_dpop_proof and do not spend the code")
    func hostileProofs() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let (authorization, code) = try await signInBackend(provider, fixture)
            let token = provider.url("/token"), now = provider.clock.now
            var privateJWK = dpop.publicJWK
            privateJWK["d"] = dpop.key.rawRepresentation.base64URLEncodedString()
            let hostile: [(String, String)] = [
                ("wrong typ", try dpop.proof("POST", token, at: now, header: ["typ": "JWT"])),
                ("private key in jwk", try dpop.proof("POST", token, at: now, header: ["jwk": privateJWK])),
                ("no jwk", try dpop.proof("POST", token, at: now, header: ["jwk": "none"])),
                ("wrong htm", try dpop.proof("GET", token, at: now)),
                ("wrong htu", try dpop.proof("POST", provider.url("/userinfo"), at: now)),
                ("old iat", try dpop.proof("POST", token, at: now.addingTimeInterval(-300))),
                ("future iat", try dpop.proof("POST", token, at: now.addingTimeInterval(300))),
                ("signed by another key", try dpop.proof("POST", token, at: now, signer: P256.Signing.PrivateKey())),
                (
                    "HS256",
                    try TestJWS.hs256(
                        header: ["typ": "dpop+jwt", "alg": "HS256", "jwk": dpop.publicJWK],
                        claims: ["htm": "POST", "htu": token, "iat": Int(now.timeIntervalSince1970), "jti": "h"], secret: Data("s".utf8))
                ),
                // RFC 9449 §4.2: htu is the URI without query and fragment; one that has them is no htu.
                ("htu with a query", try dpop.proof("POST", token + "?x=1", at: now)),
                ("htu with a fragment", try dpop.proof("POST", token + "#y", at: now)),
                ("htu with both", try dpop.proof("POST", token + "?x=1#y", at: now)),
                ("htu with an empty query", try dpop.proof("POST", token + "?", at: now)),
                ("htu with an empty fragment", try dpop.proof("POST", token + "#", at: now)),
            ]
            for (label, proof) in hostile {
                let answer = try await redeem(provider, fixture, code, authorization, proof: proof)
                #expect(answer.status == 400, "\(label)")
                #expect(answer.oauthError == "invalid_dpop_proof", "\(label)")
            }
            let query = try await redeem(provider, fixture, code, authorization, proof: try dpop.proof("POST", token + "?x=1", at: now))
            #expect(query.json["error_description"] as? String == "the DPoP proof's htu must have no query or fragment")
            // None of them spent the code.
            #expect(try await redeem(provider, fixture, code, authorization, proof: try dpop.proof("POST", token, at: now)).status == 200)
        }
    }

    @Test("a DPoP proof whose htu carries a query or fragment is refused at /par and at /userinfo too")
    func htuWithQueryElsewhere() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let par = provider.url("/par"), now = provider.clock.now
            for htu in [par + "?a=b", par + "#f", par + "?"] {
                let pushed = try await ScriptedBrowser().post(
                    par, form: fixture.backendAuthorization.parameters() + (try fixture.assertion()),
                    headers: [("DPoP", try dpop.proof("POST", htu, at: now))])
                #expect(pushed.status == 400, "\(htu)")
                #expect(pushed.oauthError == "invalid_dpop_proof", "\(htu)")
            }
            let (authorization, code) = try await signInBackend(provider, fixture)
            let tokens = try await redeem(provider, fixture, code, authorization, proof: try dpop.proof("POST", provider.url("/token"), at: now))
                .decode(TokenResponse.self)
            let userinfo = provider.url("/userinfo")
            func ask(_ url: String, htu: String) async throws -> ScriptedResponse {
                try await ScriptedBrowser().get(
                    url,
                    headers: [
                        ("Authorization", "DPoP \(tokens.accessToken)"),
                        ("DPoP", try dpop.proof("GET", htu, at: now, accessToken: tokens.accessToken)),
                    ])
            }
            for htu in [userinfo + "?schema=openid", userinfo + "#top"] {
                let answer = try await ask(userinfo, htu: htu)
                #expect(answer.status == 401, "\(htu)")
                #expect(answer.oauthError == "invalid_dpop_proof", "\(htu)")
            }
            // The request's own query is no part of htu: a proof of the bare URL is good for it.
            #expect(try await ask(userinfo + "?schema=openid", htu: userinfo).status == 200)
        }
    }

    @Test("dpop_jkt at /authorize binds the code: only a proof of that key redeems it")
    func boundCode() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let (authorization, code) = try await signInBackend(provider, fixture, extra: [("dpop_jkt", dpop.jkt)])
            let token = provider.url("/token")
            #expect(try await redeem(provider, fixture, code, authorization, proof: nil).oauthError == "invalid_grant")
            #expect(
                try await redeem(provider, fixture, code, authorization, proof: try DPoPKey().proof("POST", token, at: provider.clock.now)).oauthError
                    == "invalid_grant")
            #expect(
                try await redeem(provider, fixture, code, authorization, proof: try dpop.proof("POST", token, at: provider.clock.now)).status == 200)
            let malformed = try await ScriptedBrowser().get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("dpop_jkt", "short")]))
            #expect(malformed.locationParameters?["error"] == "invalid_request")
        }
    }

    @Test("a DPoP proof at /par binds the code to its key")
    func parBinding() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let authorization = fixture.backendAuthorization
            let pushed = try await ScriptedBrowser().post(
                provider.url("/par"), form: authorization.parameters() + (try fixture.assertion()),
                headers: [("DPoP", try dpop.proof("POST", provider.url("/par"), at: provider.clock.now))])
            #expect(pushed.status == 201, "\(pushed.body)")
            let uri = try #require(pushed.json["request_uri"] as? String)
            let browser = ScriptedBrowser()
            let page = try await browser.get(provider.url("/authorize?") + FormParameters([("client_id", "backend"), ("request_uri", uri)]).encoded)
            let fields = try #require(LoginForm.fields(in: page.body))
            let login = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "alice"), ("password", Fixture.password),
                ])
            let code = try #require(login.locationParameters?["code"])
            #expect(try await redeem(provider, fixture, code, authorization, proof: nil).oauthError == "invalid_grant")
            #expect(
                try await redeem(
                    provider, fixture, code, authorization, proof: try dpop.proof("POST", provider.url("/token"), at: provider.clock.now)
                ).status == 200)
        }
    }

    @Test("a public client's refresh token is bound to its DPoP key; once spent, its reuse revokes the family only with a proof of that key")
    func boundRefreshToken() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let authorization = fixture.appAuthorization
            let code = try await provider.signIn(authorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password)
            let token = provider.url("/token")
            let tokens = try await provider.redeem(
                code, authorization, clientAuth: [("client_id", "app")], headers: [("DPoP", try dpop.proof("POST", token, at: provider.clock.now))]
            )
            .decode(TokenResponse.self)
            let refreshToken = try #require(tokens.refreshToken)
            func refresh(_ proof: String?, _ presented: String? = nil) async throws -> ScriptedResponse {
                try await ScriptedBrowser().post(
                    token, form: [("grant_type", "refresh_token"), ("refresh_token", presented ?? refreshToken), ("client_id", "app")],
                    headers: proof.map { [("DPoP", $0)] } ?? [])
            }
            #expect(try await refresh(nil).oauthError == "invalid_grant")
            #expect(try await refresh(try DPoPKey().proof("POST", token, at: provider.clock.now)).oauthError == "invalid_grant")
            let refreshed = try await refresh(try dpop.proof("POST", token, at: provider.clock.now))
            #expect(refreshed.status == 200)
            #expect(try refreshed.decode(TokenResponse.self).tokenType == "DPoP")

            // The first token is spent now. Its copy without the key (taken off the phone) is
            // refused and ends nothing: the rotated one still works.
            #expect(try await refresh(nil).oauthError == "invalid_grant")
            #expect(try await refresh(try DPoPKey().proof("POST", token, at: provider.clock.now)).oauthError == "invalid_grant")
            let rotated = try #require(try refreshed.decode(TokenResponse.self).refreshToken)
            let again = try await refresh(try dpop.proof("POST", token, at: provider.clock.now), rotated)
            #expect(again.status == 200, "no reuse without the key revoked the family")
            let newest = try #require(try again.decode(TokenResponse.self).refreshToken)
            // With a proof of the key, the reuse is the holder's: the family is revoked.
            #expect(try await refresh(try dpop.proof("POST", token, at: provider.clock.now)).oauthError == "invalid_grant")
            #expect(try await refresh(try dpop.proof("POST", token, at: provider.clock.now), newest).oauthError == "invalid_grant")
        }
    }

    @Test(
        "at /revoke, a public client's DPoP-bound refresh token (spent or current) or access token is ended only with a proof of its key; each answer is 200"
    )
    func revokeNeedsTheKey() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let token = provider.url("/token")
            let revokeURL = provider.url("/revoke")
            let authorization = fixture.appAuthorization
            let code = try await provider.signIn(authorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password)
            let first = try await provider.redeem(
                code, authorization, clientAuth: [("client_id", "app")], headers: [("DPoP", try dpop.proof("POST", token, at: provider.clock.now))]
            )
            .decode(TokenResponse.self)
            func refresh(_ refreshToken: String) async throws -> ScriptedResponse {
                try await ScriptedBrowser().post(
                    token, form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", "app")],
                    headers: [("DPoP", try dpop.proof("POST", token, at: provider.clock.now))])
            }
            func revoke(_ revoked: String, proof: String?) async throws -> ScriptedResponse {
                try await ScriptedBrowser().post(
                    revokeURL, form: [("token", revoked), ("client_id", "app")], headers: proof.map { [("DPoP", $0)] } ?? [])
            }
            let second = try await refresh(try #require(first.refreshToken)).decode(TokenResponse.self)
            let current = try #require(second.refreshToken)
            // A copy of the spent token, of the current one, or of the access token, without the key.
            for (copy, proof) in [
                (first.refreshToken!, nil), (first.refreshToken!, try DPoPKey().proof("POST", revokeURL, at: provider.clock.now)),
                (current, nil), (current, try DPoPKey().proof("POST", revokeURL, at: provider.clock.now)),
                (second.accessToken, nil), (second.accessToken, try DPoPKey().proof("POST", revokeURL, at: provider.clock.now)),
            ] as [(String, String?)] {
                #expect(try await revoke(copy, proof: proof).status == 200)
            }
            let live = try await refresh(current)
            #expect(live.status == 200, "no copy ended the sign-in")
            let newest = try #require(try live.decode(TokenResponse.self).refreshToken)
            #expect(try await provider.store.auditEvents(AuditQuery()).filter { $0.kind == "token.revoked" }.isEmpty)

            // A proof for another endpoint is no proof here.
            #expect(try await revoke(newest, proof: try dpop.proof("POST", token, at: provider.clock.now)).oauthError == "invalid_dpop_proof")
            // The holder, with its key: ended.
            #expect(try await revoke(newest, proof: try dpop.proof("POST", revokeURL, at: provider.clock.now)).status == 200)
            #expect(try await refresh(newest).oauthError == "invalid_grant")
            #expect(try await provider.store.auditEvents(AuditQuery()).filter { $0.kind == "token.revoked" }.count == 1)
        }
    }

    @Test("a client registered to require DPoP gets no token without a proof")
    func requiredDPoP() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            try await provider.admin.updateClient(id: "backend", .init(requireDPoP: true))
            let (authorization, code) = try await signInBackend(provider, fixture)
            #expect(try await redeem(provider, fixture, code, authorization, proof: nil).oauthError == "invalid_dpop_proof")
            let discovery = try await ScriptedBrowser().get(provider.url("/.well-known/openid-configuration"))
            #expect((discovery.json["dpop_signing_alg_values_supported"] as? [String])?.contains("ES256") == true)
        }
    }

    @Test("50 parallel requests with one proof: exactly one is served")
    func proofUsedOnce() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let (authorization, code) = try await signInBackend(provider, fixture)
            let tokens = try await redeem(
                provider, fixture, code, authorization, proof: try dpop.proof("POST", provider.url("/token"), at: provider.clock.now)
            ).decode(TokenResponse.self)
            let userinfo = provider.url("/userinfo")
            let proof = try dpop.proof("GET", userinfo, at: provider.clock.now, accessToken: tokens.accessToken)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await ScriptedBrowser().get(userinfo, headers: [("Authorization", "DPoP \(tokens.accessToken)"), ("DPoP", proof)]).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 401 }.count == 49)
        }
    }

    @Test("with server nonces on, a proof without the current nonce gets use_dpop_nonce and the nonce; with it, the request is served")
    func serverNonces() async throws {
        try await withTestProvider(configure: {
            $0.dpopNonces = true
            $0.accessTokenLifetime = 3_600
        }) { provider in
            let fixture = try await Fixture.make(provider)
            let dpop = DPoPKey()
            let (authorization, code) = try await signInBackend(provider, fixture)
            let token = provider.url("/token")
            let first = try await redeem(provider, fixture, code, authorization, proof: try dpop.proof("POST", token, at: provider.clock.now))
            #expect(first.status == 400)
            #expect(first.oauthError == "use_dpop_nonce")
            let nonce = try #require(first.header("DPoP-Nonce"))
            let stale = try await redeem(
                provider, fixture, code, authorization, proof: try dpop.proof("POST", token, at: provider.clock.now, claims: ["nonce": "made-up"]))
            #expect(stale.oauthError == "use_dpop_nonce")
            let served = try await redeem(
                provider, fixture, code, authorization, proof: try dpop.proof("POST", token, at: provider.clock.now, claims: ["nonce": nonce]))
            #expect(served.status == 200, "\(served.body)")
            let access = try served.decode(TokenResponse.self).accessToken
            let userinfo = provider.url("/userinfo")
            let asked = try await ScriptedBrowser().get(
                userinfo,
                headers: [
                    ("Authorization", "DPoP \(access)"), ("DPoP", try dpop.proof("GET", userinfo, at: provider.clock.now, accessToken: access)),
                ])
            #expect(asked.status == 401)
            #expect(asked.header("WWW-Authenticate")?.contains("use_dpop_nonce") == true)
            #expect(asked.header("DPoP-Nonce") != nil)
            // A nonce lives between one and two five-minute windows.
            provider.clock.advance(by: 700)
            let expired = try await ScriptedBrowser().get(
                userinfo,
                headers: [
                    ("Authorization", "DPoP \(access)"),
                    ("DPoP", try dpop.proof("GET", userinfo, at: provider.clock.now, accessToken: access, claims: ["nonce": nonce])),
                ])
            #expect(expired.header("WWW-Authenticate")?.contains("use_dpop_nonce") == true)
        }
    }
}
