import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing

/// Each repeated member is tried in both orders: whichever copy a JSON decoder keeps, one
/// order hands it the right value, so only the refusal of the repeat itself fails both.
@Suite("JWTs that repeat a member name are refused (RFC 7515 §5.2, RFC 7519 §4, RFC 8725 §3.2)")
struct RepeatedMemberTests {
    // MARK: client assertions

    /// Header and claims members of a valid assertion for the backend client.
    func assertionMembers(_ fixture: Fixture) -> (header: [(String, Any)], claims: [(String, Any)]) {
        let now = Int(fixture.provider.clock.now.timeIntervalSince1970)
        return (
            [("alg", "ES256"), ("kid", fixture.backendKey.keyID), ("typ", "JWT")],
            [
                ("iss", "backend"), ("sub", "backend"), ("aud", fixture.provider.url("/token")), ("iat", now), ("exp", now + 60),
                ("jti", UUID().uuidString),
            ]
        )
    }

    /// POSTs a refresh with a bogus token: the client is authenticated first, so a good
    /// assertion gets 400 invalid_grant and a refused one 401 invalid_client.
    func tryAssertion(_ fixture: Fixture, header: [(String, Any)], claims: [(String, Any)]) async throws -> ScriptedResponse {
        let assertion = try TestJWS.es256(headerJSON: TestJWS.object(header), claimsJSON: TestJWS.object(claims), key: fixture.backendKey.privateKey)
        return try await ScriptedBrowser().post(
            fixture.provider.url("/token"),
            form: [("grant_type", "refresh_token"), ("refresh_token", "unknown")] + TestJWS.assertionFields(assertion))
    }

    /// `members` with `name`'s value replaced by `first` and `second`, in that order, at its place.
    func repeating(_ members: [(String, Any)], _ name: String, _ first: Any, _ second: Any) -> [(String, Any)] {
        members.flatMap { member in member.0 == name ? [(name, first), (name, second)] : [member] }
    }

    @Test("a client assertion that repeats alg, kid, sub, aud or exp is invalid_client, in either order")
    func repeatedAssertionMembers() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let now = Int(provider.clock.now.timeIntervalSince1970)
            let (header, claims) = assertionMembers(fixture)

            // The members without repeats authenticate the client.
            let control = try await tryAssertion(fixture, header: header, claims: claims)
            #expect(control.status == 400)
            #expect(control.oauthError == "invalid_grant")

            let headerCases: [(String, Any, Any)] = [
                ("alg", "ES256", "ES256"), ("alg", "none", "ES256"), ("alg", "HS256", "ES256"),
                ("kid", "unknown", fixture.backendKey.keyID),
            ]
            let claimCases: [(String, Any, Any)] = [
                ("sub", "someone-else", "backend"),
                ("aud", "https://attacker.example.com/token", provider.url("/token")),
                ("aud", provider.url("/token"), provider.url("/token")),
                ("exp", now - 3600, now + 60),
                ("iss", "app", "backend"),
            ]
            for (name, wrong, right) in headerCases {
                for (first, second) in [(wrong, right), (right, wrong)] {
                    let response = try await tryAssertion(
                        fixture, header: repeating(header, name, first, second), claims: assertionMembers(fixture).claims)
                    #expect(response.status == 401, "header \(name): \(first), \(second)")
                    #expect(response.oauthError == "invalid_client", "header \(name)")
                    #expect((response.json["error_description"] as? String)?.contains("repeats the member \(name)") == true, "header \(name)")
                }
            }
            for (name, wrong, right) in claimCases {
                for (first, second) in [(wrong, right), (right, wrong)] {
                    let response = try await tryAssertion(
                        fixture, header: header, claims: repeating(assertionMembers(fixture).claims, name, first, second))
                    #expect(response.status == 401, "claim \(name): \(first), \(second)")
                    #expect(response.oauthError == "invalid_client", "claim \(name)")
                    #expect((response.json["error_description"] as? String)?.contains("repeats the claim \(name)") == true, "claim \(name)")
                }
            }
        }
    }

    @Test("a name repeated through a JSON escape (a\\u006cg, \\u0061ud) counts as the same name")
    func escapedRepeat() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (header, claims) = assertionMembers(fixture)
            let headerJSON = try TestJWS.object(header).dropLast() + #","a\u006cg":"ES256"}"#
            var assertion = try TestJWS.es256(headerJSON: String(headerJSON), claimsJSON: TestJWS.object(claims), key: fixture.backendKey.privateKey)
            var response = try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", "x")] + TestJWS.assertionFields(assertion))
            #expect(response.status == 401)
            #expect(response.oauthError == "invalid_client")

            let claimsJSON = try TestJWS.object(claims).dropLast() + #","\u0061ud":"https://attacker.example.com"}"#
            assertion = try TestJWS.es256(headerJSON: TestJWS.object(header), claimsJSON: String(claimsJSON), key: fixture.backendKey.privateKey)
            response = try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", "x")] + TestJWS.assertionFields(assertion))
            #expect(response.status == 401)
            #expect(response.oauthError == "invalid_client")
        }
    }

    @Test("an assertion with a repeated aud cannot redeem a code, while the same assertion without the repeat can")
    func repeatedAudienceCannotRedeem() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.backendAuthorization
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let (header, claims) = assertionMembers(fixture)
            for (first, second) in [
                ("https://attacker.example.com", provider.url("/token")), (provider.url("/token"), "https://attacker.example.com"),
            ] {
                let assertion = try TestJWS.es256(
                    headerJSON: TestJWS.object(header), claimsJSON: TestJWS.object(repeating(claims, "aud", first, second)),
                    key: fixture.backendKey.privateKey)
                let refused = try await provider.redeem(code, authorization, clientAuth: TestJWS.assertionFields(assertion))
                #expect(refused.status == 401)
                #expect(refused.oauthError == "invalid_client")
            }
            let assertion = try TestJWS.es256(
                headerJSON: TestJWS.object(header), claimsJSON: TestJWS.object(claims), key: fixture.backendKey.privateKey)
            #expect(try await provider.redeem(code, authorization, clientAuth: TestJWS.assertionFields(assertion)).status == 200)
        }
    }

    // MARK: id_token_hint

    /// An ID token for alice signed with the provider's active key, from the given members.
    func hint(_ provider: TestProvider, header: (String) -> [(String, Any)], claims: [(String, Any)]) async throws -> String {
        let active = try #require(try await provider.store.signingKeys().first { $0.status == .active })
        let key = try SigningKeyFactory.privateKey(pem: active.privateKeyPEM)
        return try TestJWS.es256(headerJSON: TestJWS.object(header(active.kid)), claimsJSON: TestJWS.object(claims), key: key)
    }

    func hintMembers(_ provider: TestProvider, user: UserRecord) -> [(String, Any)] {
        let now = Int(provider.clock.now.timeIntervalSince1970)
        return [("iss", provider.issuer), ("sub", user.id), ("aud", ["app"]), ("iat", now), ("exp", now + 600)]
    }

    static func hintHeader(_ kid: String) -> [(String, Any)] { [("alg", "ES256"), ("kid", kid), ("typ", "JWT")] }

    /// The hints to refuse: repeated iss, sub, exp, kid and typ, each in both orders.
    func repeatedHints(_ fixture: Fixture) async throws -> [(String, String)] {
        let provider = fixture.provider
        let claims = hintMembers(provider, user: fixture.user)
        var hints: [(String, String)] = []
        let claimCases: [(String, Any, Any)] = [
            ("iss", "https://attacker.example.com", provider.issuer), ("sub", "someone-else", fixture.user.id),
            ("aud", ["other-client"], ["app"]),
        ]
        for (name, wrong, right) in claimCases {
            for (first, second) in [(wrong, right), (right, wrong)] {
                hints.append(("claim \(name)", try await hint(provider, header: Self.hintHeader, claims: repeating(claims, name, first, second))))
            }
        }
        for (first, second) in [("unknown", nil), (nil, "unknown")] as [(String?, String?)] {
            let token = try await hint(
                provider, header: { kid in self.repeating(Self.hintHeader(kid), "kid", first ?? kid, second ?? kid) }, claims: claims)
            hints.append(("header kid", token))
        }
        for (first, second) in [("at+jwt", "JWT"), ("JWT", "at+jwt")] {
            hints.append(
                (
                    "header typ",
                    try await hint(provider, header: { kid in self.repeating(Self.hintHeader(kid), "typ", first, second) }, claims: claims)
                ))
        }
        return hints
    }

    @Test("GET /authorize with an id_token_hint that repeats a member redirects with invalid_request; without the repeat it is used")
    func authorizeHint() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let valid = try await hint(provider, header: Self.hintHeader, claims: hintMembers(provider, user: fixture.user))
            let accepted = try await ScriptedBrowser().get(fixture.appAuthorization.url(issuer: provider.issuer, extra: [("id_token_hint", valid)]))
            #expect(accepted.status == 200)
            #expect(LoginForm.fields(in: accepted.body) != nil)
            for (name, token) in try await repeatedHints(fixture) {
                let response = try await ScriptedBrowser().get(
                    fixture.appAuthorization.url(issuer: provider.issuer, extra: [("id_token_hint", token)]))
                #expect(response.status == 302, "\(name)")
                #expect(response.locationParameters?["error"] == "invalid_request", "\(name)")
            }
        }
    }

    @Test("/logout with an id_token_hint that repeats a member is refused; without the repeat it signs out")
    func logoutHint() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let valid = try await hint(provider, header: Self.hintHeader, claims: hintMembers(provider, user: fixture.user))
            let accepted = try await ScriptedBrowser().get(provider.url("/logout?") + FormParameters([("id_token_hint", valid)]).encoded)
            #expect(accepted.status == 200)
            #expect(accepted.body.contains("You are signed out"))
            for (name, token) in try await repeatedHints(fixture) {
                let response = try await ScriptedBrowser().get(provider.url("/logout?") + FormParameters([("id_token_hint", token)]).encoded)
                #expect(response.status == 400, "\(name)")
                #expect(response.body.contains("id_token_hint is not an ID token issued here"), "\(name)")
            }
        }
    }

    @Test("the native login start refuses an id_token_hint that repeats a member; without the repeat it starts")
    func nativeStartHint() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let app = NativeApp(provider)
            let valid = try await hint(provider, header: Self.hintHeader, claims: hintMembers(provider, user: fixture.user))
            #expect(try await app.start(extra: ["id_token_hint": valid]).status == 201)
            for (name, token) in try await repeatedHints(fixture) {
                let response = try await app.start(extra: ["id_token_hint": token])
                #expect(response.status == 400, "\(name)")
                #expect(response.json["error"] as? String == "invalid_request", "\(name)")
            }
        }
    }
}
