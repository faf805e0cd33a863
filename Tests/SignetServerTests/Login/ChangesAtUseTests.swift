// What a second outside review found, each pinned by a test.
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Changes seen at use: security stamps, simultaneous user changes, path variants, assurance at redemption, native bodies")
struct ChangesAtUseTests {
    @Test("grants and browser sessions made before a password change die with it, even if revocation missed them")
    func stampCheckedAtUse() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            let authorization = fixture.backendAuthorization
            let code = try await provider.signIn(authorization, browser: browser, username: "alice", password: Fixture.password)
            let tokens = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion()).decode(TokenResponse.self)
            let second = fixture.backendAuthorization
            let unredeemed = try await provider.signIn(second, browser: ScriptedBrowser(), username: "alice", password: Fixture.password)
            // A new password written without the usual revocation, as when a finishing login races it.
            var alice = try #require(try await provider.store.user(username: "alice"))
            let old = alice.securityStamp
            alice.securityStamp = "changed"
            #expect(try await provider.store.replaceUser(alice, expectedStamp: old))
            let refresh = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken))] + (try fixture.assertion()))
            #expect(refresh.oauthError == "invalid_grant")
            #expect(try await provider.redeem(unredeemed, second, clientAuth: try fixture.assertion()).oauthError == "invalid_grant")
            let userInfo = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")])
            #expect(userInfo.status == 401)
            let silent = try await browser.get(fixture.backendAuthorization.url(issuer: provider.issuer, extra: [("prompt", "none")]))
            #expect(silent.locationParameters?["error"] == "login_required")
        }
    }

    @Test("a password change and a lock at the same time both take effect")
    func concurrentAdminChanges() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            for round in 0..<5 {
                async let password: Void = provider.admin.setPassword(username: "alice", password: "passphrase \(round)")
                async let lock: Void = provider.admin.setLocked(username: "alice", true)
                _ = try await (password, lock)
                let alice = try #require(try await provider.store.user(username: "alice"))
                #expect(alice.locked)
                #expect(await PasswordHasher(cost: 4).verify("passphrase \(round)", hash: alice.passwordHash))
                try await provider.admin.setLocked(username: "alice", false)
            }
        }
    }

    @Test("//token and /token/ get the OAuth endpoint rules and JSON errors too")
    func pathVariants() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            for path in ["//token", "/token/", "//revoke"] {
                let json = try await ScriptedBrowser().send("POST", provider.url(path), body: "{}", headers: [("Content-Type", "application/json")])
                #expect(json.status == 400, "\(path)")
                #expect(json.oauthError == "invalid_request", "\(path)")
                let get = try await ScriptedBrowser().get(provider.url(path))
                #expect(get.status == 405, "\(path)")
                #expect(get.oauthError == "invalid_request", "\(path)")
            }
        }
    }

    @Test("a code issued before the client's min_acr was raised cannot be redeemed")
    func minimumAtRedemption() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (authorization, code) = try await fixture.backendCode()
            try await provider.admin.updateClient(id: "backend", .init(minimumACR: .some(AssuranceLevel.twoFactors)))
            #expect(try await provider.redeem(code, authorization, clientAuth: try fixture.assertion()).oauthError == "invalid_grant")
        }
    }

    @Test("the native start refuses a member sent twice and answers an oversized body with a JSON 413")
    func nativeBodies() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            var fields = app.authorization.parameters().map { "\"\($0.0)\":\"\($0.1)\"" }
            fields.append("\"acr_values\":\"urn:signet:loa:2\"")
            fields.append("\"acr_values\":\"urn:signet:loa:1\"")
            let repeated = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"), body: "{" + fields.joined(separator: ",") + "}",
                headers: [("Content-Type", "application/json")])
            #expect(repeated.status == 400)
            #expect(repeated.oauthError == "invalid_request")
            #expect((repeated.json["error_description"] as? String)?.contains("acr_values") == true)
            let huge = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"), body: "{\"x\":\"" + String(repeating: "a", count: 70_000) + "\"}",
                headers: [("Content-Type", "application/json")])
            #expect(huge.status == 413)
            #expect(huge.oauthError == "invalid_request")
        }
    }
}
