import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing

@Suite("Refresh, userinfo and revocation")
struct RefreshAndRevocationTests {
    func refresh(_ fixture: Fixture, _ token: String, extra: [(String, String)] = []) async throws -> ScriptedResponse {
        try await ScriptedBrowser().post(
            fixture.provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", token)] + extra + (try fixture.assertion()))
    }

    @Test(
        "a replayed code and a reused refresh token raise the alarm (warning) once, when they revoke a live grant; replays after that are logged at info"
    )
    func replayAlarmOnlyForALiveGrant() async throws {
        let capture = LogCapture()
        try await withTestProvider(logger: capture.logger(level: .info)) { provider in
            let fixture = try await Fixture.make(provider)
            func events() -> [(level: String, event: String)] {
                capture.objects.compactMap { line in
                    guard let event = line["event"] as? String, event.hasPrefix("code.replayed") || event.hasPrefix("refresh.reused") else {
                        return nil
                    }
                    return (line["level"] as? String ?? "", event)
                }
            }
            // A code replayed twice: the first replay revokes the live grant, the second finds it revoked.
            let (authorization, code) = try await fixture.backendCode()
            #expect(try await provider.redeem(code, authorization, clientAuth: try fixture.assertion()).status == 200)
            for _ in 0..<2 {
                #expect(try await provider.redeem(code, authorization, clientAuth: try fixture.assertion()).oauthError == "invalid_grant")
            }
            #expect(events().map(\.event) == ["code.replayed", "code.replayed_again"])
            #expect(events().map(\.level) == ["warning", "info"])
            // The same for a rotated refresh token coming back twice.
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            #expect(try await refresh(fixture, tokens.refreshToken!).status == 200)
            for _ in 0..<2 { #expect(try await refresh(fixture, tokens.refreshToken!).oauthError == "invalid_grant") }
            #expect(events().map(\.event) == ["code.replayed", "code.replayed_again", "refresh.reused", "refresh.reused_again"])
            #expect(events().map(\.level) == ["warning", "info", "warning", "info"])
        }
    }

    @Test(
        "a public client's used code replayed without its verifier or with another redirect URI is refused and revokes nothing; with both, it revokes the grant, and each revocation by a replay is an audit event"
    )
    func publicCodeReplayNeedsTheVerifier() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.appAuthorization
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let tokens = try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")]).decode(TokenResponse.self)
            func live() async throws -> Bool {
                try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")]).status == 200
            }
            func revocations() async throws -> [AuditEventRecord] {
                try await provider.store.auditEvents(AuditQuery()).filter { $0.kind == "grant.revoked" }
            }

            // Someone who saw the used code in a URL, without the app's verifier.
            var thief = authorization
            thief.verifier = PKCE.makeVerifier()
            let withoutVerifier = try await provider.redeem(code, thief, clientAuth: [("client_id", "app")])
            #expect(withoutVerifier.status == 400)
            #expect(withoutVerifier.oauthError == "invalid_grant")
            var elsewhere = authorization
            elsewhere.redirectURI = "http://127.0.0.1/callback"
            #expect(try await provider.redeem(code, elsewhere, clientAuth: [("client_id", "app")]).oauthError == "invalid_grant")
            #expect(try await live(), "a replay that could not have redeemed the code ends nothing")
            #expect(try await revocations().isEmpty)

            // The replay of one who holds the verifier: RFC 6749 §4.1.2's stolen code.
            #expect(try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")]).oauthError == "invalid_grant")
            #expect(try await !live())
            let grantID = try #require(AccessTokenClaims.unverified(tokens.accessToken)).grantID
            let event = try #require(try await revocations().first)
            #expect(try await revocations().count == 1)
            #expect(event.actor == "system")
            #expect(event.target == grantID)
            #expect(event.reason == "code.replayed")
            #expect(event.userID == fixture.user.id)
            #expect(event.clientID == "app")

            // A reused refresh token's revocation is recorded the same way.
            let backend = try await fixture.backendTokens().1.decode(TokenResponse.self)
            #expect(try await refresh(fixture, backend.refreshToken!).status == 200)
            #expect(try await refresh(fixture, backend.refreshToken!).oauthError == "invalid_grant")
            #expect(try await refresh(fixture, backend.refreshToken!).oauthError == "invalid_grant")
            let reused = try await revocations().filter { $0.reason == "refresh.reused" }
            #expect(reused.count == 1, "a grant already revoked is not recorded again")
            #expect(reused.first?.target == (try #require(AccessTokenClaims.unverified(backend.accessToken)).grantID))
        }
    }

    @Test("a refresh token rotates; reusing the old one revokes the whole family")
    func rotationAndReuse() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let first = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let second = try await refresh(fixture, first.refreshToken!)
            #expect(second.status == 200)
            let rotated = try second.decode(TokenResponse.self)
            #expect(rotated.refreshToken != first.refreshToken)
            #expect(rotated.idToken != nil)

            let reuse = try await refresh(fixture, first.refreshToken!)
            #expect(reuse.status == 400)
            #expect(reuse.oauthError == "invalid_grant")
            // The family is gone: the newest refresh token and access token stop working too.
            #expect(try await refresh(fixture, rotated.refreshToken!).oauthError == "invalid_grant")
            let userInfo = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(rotated.accessToken)")])
            #expect(userInfo.status == 401)
        }
    }

    @Test("a reused refresh token revokes its family even when its grant cannot be read (an invalid_grant answer, not a server error)")
    func reuseWithUnreadableGrant() async throws {
        let store = GatedStore()
        try await withTestProvider(store: store) { provider in
            let fixture = try await Fixture.make(provider)
            let first = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let rotated = try await refresh(fixture, first.refreshToken!).decode(TokenResponse.self)

            store.failGrantReads.set(true)
            let reuse = try await refresh(fixture, first.refreshToken!)
            #expect(reuse.status == 400)
            #expect(reuse.oauthError == "invalid_grant")
            store.failGrantReads.set(false)
            // The family was revoked all the same: the rotated token is spent and its grant revoked.
            #expect(try await refresh(fixture, rotated.refreshToken!).oauthError == "invalid_grant")
            let userInfo = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(rotated.accessToken)")])
            #expect(userInfo.status == 401)
            #expect(try await store.base.revokeGrants(userID: fixture.user.id, at: provider.clock.now) == 0, "no grant of the user is left live")
        }
    }

    @Test("a grant revoked before its code is redeemed or its refresh token used gives no tokens, even revoked at the same instant as the request")
    func revokedAtTheSameInstant() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (authorization, code) = try await fixture.backendCode()
            // The test clock stands still: the revocation and the redemption carry the same time.
            #expect(try await provider.store.revokeGrants(userID: fixture.user.id, at: provider.clock.now) == 1)
            let redeemed = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            #expect(redeemed.status == 400)
            #expect(redeemed.oauthError == "invalid_grant")

            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            #expect(try await provider.store.revokeGrants(userID: fixture.user.id, at: provider.clock.now) == 1)
            let refreshed = try await refresh(fixture, tokens.refreshToken!)
            #expect(refreshed.oauthError == "invalid_grant")
        }
    }

    @Test("50 concurrent refreshes with one refresh token yield exactly one success")
    func concurrentRefresh() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let token = try #require(tokens.refreshToken)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { try await refresh(fixture, token).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 400 }.count == 49)
        }
    }

    @Test("refresh may narrow the scope but not widen it")
    func scopeNarrowing() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let wider = try await refresh(fixture, tokens.refreshToken!, extra: [("scope", "openid phone")])
            #expect(wider.oauthError == "invalid_scope")
            let narrower = try await refresh(fixture, tokens.refreshToken!, extra: [("scope", "openid")])
            #expect(narrower.status == 200)
            #expect(try narrower.decode(TokenResponse.self).scope == "openid")
        }
    }

    @Test("userinfo answers with the scoped claims and challenges missing or bad tokens")
    func userInfo() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let browser = ScriptedBrowser()
            let ok = try await browser.get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")])
            #expect(ok.status == 200)
            #expect(ok.json["sub"] as? String == fixture.user.id)
            #expect(ok.json["email"] as? String == "alice@example.com")
            #expect(ok.json["phone_number"] == nil)
            let post = try await browser.post(provider.url("/userinfo"), form: [("access_token", tokens.accessToken)])
            #expect(post.status == 200)
            let missing = try await browser.get(provider.url("/userinfo"))
            #expect(missing.status == 401)
            #expect(missing.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            let garbage = try await browser.get(provider.url("/userinfo"), headers: [("Authorization", "Bearer garbage")])
            #expect(garbage.status == 401)
            #expect(garbage.header("WWW-Authenticate")?.contains("invalid_token") == true)
            // An ID token is not an access token.
            let idToken = try await browser.get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.idToken!)")])
            #expect(idToken.status == 401)
            provider.clock.advance(by: 601)
            let expired = try await browser.get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")])
            #expect(expired.status == 401)
        }
    }

    @Test("revoking a refresh token ends its grant; unknown tokens still get 200; other clients cannot revoke")
    func revocation() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let browser = ScriptedBrowser()
            let foreign = try await browser.post(provider.url("/revoke"), form: [("token", tokens.refreshToken!), ("client_id", "app")])
            #expect(foreign.status == 200)
            #expect(try await refresh(fixture, tokens.refreshToken!).status == 200)

            let tokens2 = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let revoked = try await browser.post(
                provider.url("/revoke"), form: [("token", tokens2.refreshToken!), ("token_type_hint", "refresh_token")] + (try fixture.assertion()))
            #expect(revoked.status == 200)
            #expect(try await refresh(fixture, tokens2.refreshToken!).oauthError == "invalid_grant")
            let userInfo = try await browser.get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens2.accessToken)")])
            #expect(userInfo.status == 401)

            let unknown = try await browser.post(provider.url("/revoke"), form: [("token", "unknown")] + (try fixture.assertion()))
            #expect(unknown.status == 200)
            let badHint = try await browser.post(
                provider.url("/revoke"), form: [("token", "x"), ("token_type_hint", "id_token")] + (try fixture.assertion()))
            #expect(badHint.oauthError == "unsupported_token_type")
            let unauthenticated = try await browser.post(provider.url("/revoke"), form: [("token", "x"), ("client_id", "backend")])
            #expect(unauthenticated.status == 401)
        }
    }

    @Test("revoking an access token ends its grant")
    func revokeAccessToken() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let tokens = try await fixture.backendTokens().1.decode(TokenResponse.self)
            let revoked = try await ScriptedBrowser().post(provider.url("/revoke"), form: [("token", tokens.accessToken)] + (try fixture.assertion()))
            #expect(revoked.status == 200)
            let userInfo = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")])
            #expect(userInfo.status == 401)
            #expect(try await refresh(fixture, tokens.refreshToken!).oauthError == "invalid_grant")
        }
    }
}
