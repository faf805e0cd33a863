import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

/// Every `error` and `error_description` a response carries: in its JSON body, in the query of
/// its `Location`, and in the quoted strings of its `WWW-Authenticate` challenge.
func wireErrorTexts(_ response: ScriptedResponse) -> [String] {
    var texts: [String] = []
    let json = response.json
    for name in ["error", "error_description"] {
        if let value = json[name] as? String { texts.append(value) }
        if let value = response.locationParameters?[name] { texts.append(value) }
    }
    for challenge in response.headers("WWW-Authenticate") {
        for name in ["error", "error_description"] {
            // Up to the next `", ` or the end: a stray quote inside would show up as a bad character.
            guard let start = challenge.range(of: " \(name)=\"") else { continue }
            let rest = challenge[start.upperBound...]
            let end = rest.range(of: "\", ")?.lowerBound ?? rest.index(before: rest.endIndex)
            texts.append(String(rest[..<end]))
        }
    }
    return texts
}

@Suite("error and error_description hold only the characters RFC 6749 §5.2 allows")
struct ErrorTextTests {
    /// Text a client might send that a description could quote: typographic quotes and dashes, an
    /// ellipsis, ASCII quote and backslash, non-ASCII letters, a line break.
    static let hostile = "\u{201C}x\u{201D} \u{2013} y\u{2026} \"z\" \\ \u{E9}\n"

    @Test("every error text written in the server's source is wire-safe (no curly quotes, dashes, ellipses, \\\" or non-ASCII)")
    func sourceLiterals() throws {
        let literals = try ErrorTextScan.literals(in: ["Sources/SignetServer", "Sources/SignetCore"])
        // The scan must see the server's errors, or it proves nothing.
        #expect(literals.count > 150, "found only \(literals.count) literals")
        #expect(literals.contains { $0.text == "code_verifier must be 43 to 128 unreserved characters" })
        #expect(literals.contains { $0.text == "the login session is unknown, expired or finished; start again" })
        for literal in literals where !OAuthError.isWireSafe(literal.text) {
            Issue.record("not wire-safe: \(literal)")
        }
    }

    @Test("bad requests of every kind, hostile text included, get only wire-safe error texts in bodies, redirects and challenges")
    func endpointSweep() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let hostile = Self.hostile
            let browser = ScriptedBrowser()
            var responses: [ScriptedResponse] = []
            func token(_ form: [(String, String)], headers: [(String, String)] = []) async throws {
                responses.append(try await browser.post(provider.url("/token"), form: form, headers: headers))
            }

            // /token
            try await token([("grant_type", hostile), ("client_id", "app")])
            try await token([("client_id", "app")])
            try await token([
                ("grant_type", "authorization_code"), ("client_id", "app"), ("code", "x"), ("redirect_uri", Fixture.appRedirect),
                ("code_verifier", "short"),
            ])
            try await token([
                ("grant_type", "authorization_code"), ("client_id", "app"), ("code", "x"), ("redirect_uri", Fixture.appRedirect),
                ("code_verifier", hostile),
            ])
            try await token([(hostile, "1"), (hostile, "2"), ("client_id", "app")])
            try await token([(hostile, String(repeating: "v", count: 5000)), ("client_id", "app")])
            try await token([("grant_type", "refresh_token"), ("client_id", hostile)])
            try await token([("grant_type", "refresh_token"), ("client_id", "app"), ("client_secret", "s")])
            try await token([("grant_type", "refresh_token"), ("refresh_token", "x"), ("client_id", "basic")])
            try await token([("grant_type", "refresh_token")], headers: [("Authorization", "Basic !!!")])
            try await token([("grant_type", "refresh_token"), ("client_id", "app"), ("client_assertion", "x")])
            try await token([("grant_type", "refresh_token"), ("client_assertion_type", hostile), ("client_assertion", "x")])
            let now = Int(provider.clock.now.timeIntervalSince1970)
            let claims: [(String, Any)] = [
                ("iss", "backend"), ("sub", "backend"), ("aud", provider.url("/token")), ("iat", now), ("exp", now + 60), ("jti", UUID().uuidString),
            ]
            let assertions = [
                try TestJWS.es256(
                    headerJSON: TestJWS.object([("alg", hostile), ("kid", fixture.backendKey.keyID)]), claimsJSON: TestJWS.object(claims),
                    key: fixture.backendKey.privateKey),
                try TestJWS.es256(
                    headerJSON: TestJWS.object([("alg", "ES256"), (hostile, 1), (hostile, 2)]), claimsJSON: TestJWS.object(claims),
                    key: fixture.backendKey.privateKey),
                try TestJWS.es256(
                    headerJSON: TestJWS.object([("alg", "ES256")]), claimsJSON: TestJWS.object(claims + [(hostile, 1), (hostile, 2)]),
                    key: fixture.backendKey.privateKey),
                try TestJWS.es256(
                    headerJSON: TestJWS.object([("alg", "ES256")]), claimsJSON: TestJWS.object([("iss", hostile)]), key: fixture.backendKey.privateKey
                ),
            ]
            for assertion in assertions {
                try await token([("grant_type", "refresh_token"), ("refresh_token", "x")] + TestJWS.assertionFields(assertion))
            }
            try await token([("grant_type", "refresh_token"), ("refresh_token", "unknown")] + (try fixture.assertion()))
            try await token(
                [("grant_type", "authorization_code"), ("code", "unknown"), ("redirect_uri", hostile), ("code_verifier", PKCE.makeVerifier())]
                    + (try fixture.assertion()))
            responses.append(try await browser.post(provider.url("/token"), form: [("grant_type", "x")], headers: [("Content-Type", "text/plain")]))

            // /revoke
            for form in [
                [("token", "x"), ("token_type_hint", hostile)], [("token_type_hint", "access_token")],
                [("token", String(repeating: "t", count: 9000))],
            ] {
                responses.append(try await browser.post(provider.url("/revoke"), form: form + (try fixture.assertion())))
            }
            responses.append(try await browser.post(provider.url("/revoke"), form: [("token", "x"), ("client_id", hostile)]))

            // /userinfo
            for header in ["Basic abc", "Bearer not-a-token", "Bearer " + String(repeating: "a", count: 9000)] {
                responses.append(try await browser.get(provider.url("/userinfo"), headers: [("Authorization", header)]))
            }
            responses.append(
                try await browser.post(provider.url("/userinfo"), form: [("access_token", "x")], headers: [("Authorization", "Bearer y")]))

            // /authorize: errors sent back to the client in the redirect
            let authorization = fixture.appAuthorization
            for extra in [
                [("scope", hostile)], [("scope", "openid " + hostile)], [("prompt", hostile)], [("max_age", hostile)], [("display", hostile)],
                [("response_mode", hostile)], [("id_token_hint", hostile)], [(hostile, "1"), (hostile, "2")], [("request", hostile)],
                [(hostile, String(repeating: "v", count: 5000))], [("prompt", "none")],
            ] {
                responses.append(try await browser.get(authorization.url(issuer: provider.issuer, extra: extra)))
            }
            for (omit, extra) in [
                ("response_type", [("response_type", hostile)]), ("code_challenge_method", [("code_challenge_method", hostile)]),
                ("code_challenge", [("code_challenge", hostile)]),
            ] {
                responses.append(try await browser.get(authorization.url(issuer: provider.issuer, extra: extra, omit: [omit])))
            }

            // The native login API
            let app = NativeApp(provider)
            for extra in [["scope": hostile], ["prompt": "none"], ["id_token_hint": hostile], ["remember_token": hostile], ["client_id": hostile]] {
                responses.append(try await app.start(extra: extra))
            }
            responses.append(try await app.step("scenario", hostile, ["scenario": hostile]))

            let texts = responses.flatMap(wireErrorTexts)
            #expect(texts.count > 80, "only \(texts.count) error texts were seen")
            // The hostile text reached descriptions, sanitised rather than dropped.
            #expect(texts.contains { $0.contains("'x' - y... 'z' / ? ") })
            for text in texts where !OAuthError.isWireSafe(text) {
                Issue.record("not wire-safe: \(text.debugDescription)")
            }
            for response in responses
            where (400..<600).contains(response.status) && response.header("Location") == nil && !response.body.hasPrefix("<") {
                #expect(
                    response.oauthError != nil || response.json["error"] != nil, "\(response.status) without an error: \(response.body.prefix(100))")
            }
        }
    }
}
