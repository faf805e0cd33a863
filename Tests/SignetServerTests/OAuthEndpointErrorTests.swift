import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

/// Checks that `response` is an OAuth JSON error: status, `application/json`, `no-store`, `error`, a wire-safe description.
func expectOAuthJSONError(
    _ response: ScriptedResponse, status: Int, error: String = "invalid_request", _ comment: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(response.status == status, "\(comment)", sourceLocation: sourceLocation)
    #expect(
        response.header("Content-Type")?.hasPrefix("application/json") == true, "\(comment): \(response.header("Content-Type") ?? "no content type")",
        sourceLocation: sourceLocation)
    #expect(response.header("Cache-Control") == "no-store", "\(comment)", sourceLocation: sourceLocation)
    #expect(response.oauthError == error, "\(comment): \(response.body.prefix(200))", sourceLocation: sourceLocation)
    let description = response.json["error_description"] as? String
    #expect(description.map(OAuthError.isWireSafe) == true, "\(comment)", sourceLocation: sourceLocation)
}

@Suite("Every error of /token, /revoke and /userinfo is OAuth JSON")
struct OAuthEndpointErrorTests {
    static let endpoints: [(path: String, allow: String)] = [("/token", "POST"), ("/revoke", "POST"), ("/userinfo", "GET, HEAD, POST")]

    @Test("wrong methods are 405 with Allow and a JSON error")
    func wrongMethods() async throws {
        try await withTestProvider { provider in
            for (path, allow) in Self.endpoints {
                for method in ["GET", "PUT", "DELETE", "PATCH", "OPTIONS"] where !allow.contains(method) {
                    let response = try await ScriptedBrowser().send(method, provider.url(path), body: nil)
                    expectOAuthJSONError(response, status: 405, "\(method) \(path)")
                    #expect(response.header("Allow") == allow, "\(method) \(path)")
                }
                if !allow.contains("HEAD") {
                    let head = try await ScriptedBrowser().send("HEAD", provider.url(path), body: nil)
                    #expect(head.status == 405, "HEAD \(path)")
                    #expect(head.header("Allow") == allow, "HEAD \(path)")
                }
                // A trailing slash is the same endpoint, with the same answers.
                expectOAuthJSONError(try await ScriptedBrowser().send("PUT", provider.url(path + "/"), body: nil), status: 405, "PUT \(path)/")
            }
        }
    }

    @Test("a body larger than the limit is 413 with a JSON error")
    func tooLarge() async throws {
        try await withTestProvider { provider in
            let body = "token=" + String(repeating: "a", count: provider.configuration.maxBodySize)
            for (path, _) in Self.endpoints {
                let response = try await ScriptedBrowser().send(
                    "POST", provider.url(path), body: body, headers: [("Content-Type", "application/x-www-form-urlencoded")])
                expectOAuthJSONError(response, status: 413, "\(path)")
            }
        }
    }

    @Test("a JSON body is 400 invalid_request saying form encoding is required; other types are 415; both JSON")
    func contentTypes() async throws {
        try await withTestProvider { provider in
            for (path, _) in Self.endpoints {
                for type in ["application/json", "application/json; charset=utf-8", "application/problem+json"] {
                    let response = try await ScriptedBrowser().send(
                        "POST", provider.url(path), body: #"{"grant_type":"refresh_token","token":"x"}"#, headers: [("Content-Type", type)])
                    expectOAuthJSONError(response, status: 400, "\(type) to \(path)")
                    #expect(
                        (response.json["error_description"] as? String)?.contains("form-encoded (application/x-www-form-urlencoded)") == true,
                        "\(path)")
                }
                for type in ["text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencodedx"] {
                    let response = try await ScriptedBrowser().send("POST", provider.url(path), body: "token=x", headers: [("Content-Type", type)])
                    expectOAuthJSONError(response, status: 415, "\(type) to \(path)")
                }
            }
            for path in ["/token", "/revoke"] {
                expectOAuthJSONError(
                    try await ScriptedBrowser().send("POST", provider.url(path), body: "token=x"), status: 415, "no content type to \(path)")
            }
            // /userinfo takes a POST without a body (the token in the header), so no type is fine there.
            let bare = try await ScriptedBrowser().send("POST", provider.url("/userinfo"), body: nil)
            expectOAuthJSONError(bare, status: 401, "bare POST /userinfo")
        }
    }

    @Test("queries on POST, repeated and malformed parameters are JSON errors; unknown parameters are ignored (RFC 6749 §3.2)")
    func parameterEdgeCases() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let browser = ScriptedBrowser()
            for (path, _) in Self.endpoints {
                let query = try await browser.post(provider.url(path + "?client_id=app"), form: [("token", "x"), ("grant_type", "refresh_token")])
                expectOAuthJSONError(query, status: 400, "query on POST \(path)")
                let repeated = try await browser.post(
                    provider.url(path), form: [("token", "x"), ("token", "y"), ("access_token", "a"), ("access_token", "b"), ("client_id", "app")])
                expectOAuthJSONError(repeated, status: 400, "repeated parameters at \(path)")
                let malformed = try await browser.send(
                    "POST", provider.url(path), body: "token=%zz", headers: [("Content-Type", "application/x-www-form-urlencoded")])
                expectOAuthJSONError(malformed, status: 400, "bad percent-encoding at \(path)")
                // A raw byte that is not UTF-8 is refused as %ff is, never read as U+FFFD.
                let raw = try await browser.send(
                    "POST", provider.url(path), bytes: Array("grant_type=".utf8) + [0xFF],
                    headers: [("Content-Type", "application/x-www-form-urlencoded")])
                expectOAuthJSONError(raw, status: 400, "a raw byte that is not UTF-8 at \(path)")
                #expect(raw.json["error_description"] as? String == "the body is not UTF-8", "\(path)")
            }
            // An empty value counts as absent.
            expectOAuthJSONError(
                try await browser.post(provider.url("/token"), form: [("grant_type", ""), ("client_id", "app")]), status: 400, "empty grant_type")

            // Unknown parameters change nothing: the code is redeemed, the token revoked.
            let authorization = fixture.appAuthorization
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            let redeemed = try await provider.redeem(
                code, authorization, clientAuth: [("client_id", "app"), ("resource_hint", "x"), ("unknown", "")])
            #expect(redeemed.status == 200)
            let tokens = try redeemed.decode(TokenResponse.self)
            let revoked = try await browser.post(
                provider.url("/revoke"), form: [("token", try #require(tokens.refreshToken)), ("client_id", "app"), ("extra", "1")])
            #expect(revoked.status == 200)
        }
    }

    @Test("/userinfo without a token is 401 with a bare Bearer challenge and a JSON error; a bad token is 401 invalid_token")
    func userInfoChallenges() async throws {
        try await withTestProvider { provider in
            let missing = try await ScriptedBrowser().get(provider.url("/userinfo"))
            expectOAuthJSONError(missing, status: 401, "no token")
            #expect(missing.header("WWW-Authenticate") == #"Bearer realm="signet""#)
            let invalid = try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Bearer nope")])
            expectOAuthJSONError(invalid, status: 401, error: "invalid_token", "bad token")
            #expect(invalid.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
            expectOAuthJSONError(
                try await ScriptedBrowser().get(provider.url("/userinfo"), headers: [("Authorization", "Basic eDp5")]), status: 400, "Basic scheme")
        }
    }

    @Test("HEAD /userinfo answers as GET does, status and fields, without a body; its errors too")
    func userInfoHead() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let token = try (try await fixture.backendTokens()).1.decode(TokenResponse.self).accessToken
            let userinfo = provider.url("/userinfo")
            let browser = ScriptedBrowser()
            let get = try await browser.get(userinfo, headers: [("Authorization", "Bearer \(token)")])
            #expect(get.status == 200)
            let head = try await browser.send("HEAD", userinfo, body: nil, headers: [("Authorization", "Bearer \(token)")])
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Type") == get.header("Content-Type"))
            #expect(head.header("Cache-Control") == "no-store")
            #expect(head.header("Content-Length") == String(get.body.utf8.count))
            // The connection stays usable: no body was written after the head.
            #expect(try await browser.get(userinfo, headers: [("Authorization", "Bearer \(token)")]).body == get.body)

            let missing = try await browser.send("HEAD", userinfo, body: nil)
            #expect(missing.status == 401)
            #expect(missing.body.isEmpty)
            #expect(missing.header("WWW-Authenticate") == #"Bearer realm="signet""#)
            let invalid = try await browser.send("HEAD", userinfo, body: nil, headers: [("Authorization", "Bearer nope")])
            #expect(invalid.status == 401)
            #expect(invalid.body.isEmpty)
            #expect(invalid.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
            let twoHeaders = try await browser.send(
                "HEAD", userinfo, body: nil, headers: [("Authorization", "Bearer \(token)"), ("Authorization", "Bearer \(token)")])
            #expect(twoHeaders.status == 400)
            #expect(twoHeaders.body.isEmpty)
            // A DPoP-bound token: the proof names the method the request uses (htm HEAD).
            let dpop = DPoPKey()
            let (authorization, code) = try await fixture.backendCode()
            let bound = try await provider.redeem(
                code, authorization, clientAuth: try fixture.assertion(),
                headers: [("DPoP", try dpop.proof("POST", provider.url("/token"), at: provider.clock.now))]
            ).decode(TokenResponse.self).accessToken
            func headWithProof(_ htm: String) async throws -> ScriptedResponse {
                try await browser.send(
                    "HEAD", userinfo, body: nil,
                    headers: [
                        ("Authorization", "DPoP \(bound)"), ("DPoP", try dpop.proof(htm, userinfo, at: provider.clock.now, accessToken: bound)),
                    ])
            }
            #expect(try await headWithProof("HEAD").status == 200)
            let wrongMethod = try await headWithProof("GET")
            #expect(wrongMethod.status == 401)
            #expect(wrongMethod.header("WWW-Authenticate")?.contains("invalid_dpop_proof") == true)
            // Other methods are still refused, listing HEAD.
            let put = try await browser.send("PUT", userinfo, body: nil)
            expectOAuthJSONError(put, status: 405, "PUT /userinfo")
            #expect(put.header("Allow") == "GET, HEAD, POST")
        }
    }

    @Test("pages keep their own answers: /authorize still refuses a JSON body with 415 and wrong methods with 405")
    func pagesUnchanged() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let json = try await ScriptedBrowser().post(
                provider.url("/authorize"), form: fixture.appAuthorization.parameters(), headers: [("Content-Type", "application/json")])
            #expect(json.status == 415)
            #expect(json.header("Content-Type")?.hasPrefix("text/html") == true)
            let put = try await ScriptedBrowser().send("PUT", provider.url("/login"), body: nil)
            #expect(put.status == 405)
            #expect(put.header("Allow") == "POST")
        }
    }
}
