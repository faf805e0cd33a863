// The authorization request's secure defaults and the checks on the redirect back.
import Foundation
import SignetCore
import SignetRelyingParty
import Testing

@Suite("Authorization request")
struct AuthorizationRequestTests {
    let redirectURI = "https://service.example.com/callback"

    @Test("A request asks for a code with PKCE S256 and carries the pending state and nonce")
    func secureDefaults() async throws {
        let provider = FakeProvider()
        let request = try await makeRelyingParty(provider).makeAuthorizationRequest(redirectURI: redirectURI)
        let pending = request.pending
        let parameters = try #require(query(request.url))

        #expect(request.url.absoluteString.hasPrefix(FakeProvider.issuer + "/authorize?"))
        #expect(parameters.duplicatedNames.isEmpty)
        #expect(parameters["response_type"] == "code")
        #expect(parameters["client_id"] == FakeProvider.clientID)
        #expect(parameters["redirect_uri"] == redirectURI)
        #expect(parameters["scope"] == "openid")
        #expect(parameters["code_challenge_method"] == "S256")
        #expect(parameters["code_challenge"] == PKCE.challenge(for: pending.codeVerifier))
        #expect(PKCE.isWellFormedVerifier(pending.codeVerifier))
        #expect(parameters["state"] == pending.state)
        #expect(parameters["nonce"] == pending.nonce)
        #expect(pending.state.count >= 43 && pending.nonce.count >= 43)
        #expect(parameters["code_verifier"] == nil)
        #expect(pending.redirectURI == redirectURI)
    }

    @Test("Every request has its own state, nonce and verifier")
    func freshSecrets() async throws {
        let relyingParty = makeRelyingParty(FakeProvider())
        var seen = Set<String>()
        for _ in 0..<20 {
            let pending = try await relyingParty.makeAuthorizationRequest(redirectURI: redirectURI).pending
            #expect(pending.state != pending.nonce)
            for secret in [pending.state, pending.nonce, pending.codeVerifier] { #expect(seen.insert(secret).inserted) }
        }
    }

    @Test(
        "Extra parameters cannot replace a parameter the kit sets",
        arguments: [
            "state", "nonce", "code_challenge", "code_challenge_method", "response_type", "redirect_uri", "client_id", "scope", "request",
            "request_uri", "response_mode", "prompt",
        ])
    func extraParametersCannotOverride(name: String) async throws {
        let relyingParty = makeRelyingParty(FakeProvider())
        await #expect(throws: SignetError(.invalidConfiguration, "")) {
            try await relyingParty.makeAuthorizationRequest(redirectURI: redirectURI, extraParameters: [name: "attacker"])
        }
    }

    @Test("Hints and extra parameters are added percent-encoded, and max_age is kept for the ID token check")
    func hintsAndExtras() async throws {
        let request = try await makeRelyingParty(FakeProvider()).makeAuthorizationRequest(
            redirectURI: redirectURI, scope: "openid email", extraParameters: ["display": "page", "claims": "a+b &c"],
            loginHint: "user+tag@example.com", prompt: "login consent", maxAge: 300, acrValues: "urn:acr:2", uiLocales: "en fr")
        let parameters = try #require(query(request.url))
        #expect(parameters["scope"] == "openid email")
        #expect(parameters["login_hint"] == "user+tag@example.com")
        #expect(parameters["prompt"] == "login consent")
        #expect(parameters["max_age"] == "300")
        #expect(parameters["acr_values"] == "urn:acr:2")
        #expect(parameters["ui_locales"] == "en fr")
        #expect(parameters["display"] == "page")
        #expect(parameters["claims"] == "a+b &c")
        #expect(!(request.url.query ?? "").contains("+"))
        #expect(request.pending.maxAge == 300)
    }

    @Test("A relative redirect URI or a negative max_age is a configuration error")
    func badArguments() async throws {
        let relyingParty = makeRelyingParty(FakeProvider())
        await #expect(throws: SignetError(.invalidConfiguration, "")) {
            try await relyingParty.makeAuthorizationRequest(redirectURI: "/callback")
        }
        await #expect(throws: SignetError(.invalidConfiguration, "")) {
            try await relyingParty.makeAuthorizationRequest(redirectURI: redirectURI, maxAge: -1)
        }
    }

    @Test("The pending authorization survives a round trip through JSON and prints no secret")
    func pendingIsStorable() async throws {
        let request = try await makeRelyingParty(FakeProvider()).makeAuthorizationRequest(redirectURI: redirectURI)
        let decoded = try JSONDecoder().decode(AuthorizationRequest.self, from: JSONEncoder().encode(request))
        #expect(decoded == request)
        let printed = "\(request.pending)"
        #expect(!printed.contains(request.pending.state) && !printed.contains(request.pending.codeVerifier))
        var dumped = ""
        dump(request.pending, to: &dumped)
        #expect(!dumped.contains(request.pending.nonce) && !dumped.contains(request.pending.codeVerifier))
    }
}

@Suite("Authorization response")
struct RedirectTests {
    func pending(requiringIss: Bool = true) async throws -> (RelyingParty, PendingAuthorization) {
        let provider = FakeProvider()
        await provider.setIssParameterSupported(requiringIss)
        let relyingParty = makeRelyingParty(provider)
        let request = try await relyingParty.makeAuthorizationRequest(redirectURI: "https://service.example.com/callback")
        #expect(request.pending.requiresIssuerParameter == requiringIss)
        return (relyingParty, request.pending)
    }

    @Test("A redirect with the right state and iss yields the code")
    func success() async throws {
        let (relyingParty, pending) = try await pending()
        let url = redirect(pending, [("code", "the-code"), ("state", pending.state), ("iss", FakeProvider.issuer)])
        #expect(try relyingParty.handleRedirect(url, pending: pending) == "the-code")
    }

    @Test("A redirect without iss is accepted when the provider does not send one")
    func issOptional() async throws {
        let (relyingParty, pending) = try await pending(requiringIss: false)
        let url = redirect(pending, [("code", "the-code"), ("state", pending.state)])
        #expect(try relyingParty.handleRedirect(url, pending: pending) == "the-code")
    }

    @Test("A redirect with another state, or none, is refused")
    func stateMismatch() async throws {
        let (relyingParty, pending) = try await pending()
        for state in [[("state", pending.state + "x")], [("state", "")], []] {
            let url = redirect(pending, [("code", "the-code"), ("iss", FakeProvider.issuer)] + state)
            #expect(throws: SignetError(.stateMismatch, "")) { try relyingParty.handleRedirect(url, pending: pending) }
        }
    }

    @Test("A redirect whose iss names another issuer is refused (mix-up defence)")
    func issMismatch() async throws {
        let (relyingParty, pending) = try await pending(requiringIss: false)
        let url = redirect(pending, [("code", "c"), ("state", pending.state), ("iss", "https://evil.example.com")])
        #expect(throws: SignetError(.issuerMismatch, "")) { try relyingParty.handleRedirect(url, pending: pending) }
    }

    @Test("A redirect without iss is refused when the provider promised one")
    func issMissing() async throws {
        let (relyingParty, pending) = try await pending(requiringIss: true)
        let url = redirect(pending, [("code", "c"), ("state", pending.state)])
        #expect(throws: SignetError(.issuerMismatch, "")) { try relyingParty.handleRedirect(url, pending: pending) }
    }

    @Test("An error redirect surfaces the provider's OAuth error and description")
    func errorResponse() async throws {
        let (relyingParty, pending) = try await pending()
        let url = redirect(
            pending,
            [("error", "access_denied"), ("error_description", "The user said no"), ("state", pending.state), ("iss", FakeProvider.issuer)])
        let error = #expect(throws: SignetError.self) { try relyingParty.handleRedirect(url, pending: pending) }
        #expect(error?.code == .oauth)
        #expect(error?.oauthError == OAuthError(.accessDenied, "The user said no"))
    }

    @Test("A forged error redirect with the wrong state is a state mismatch, not the provider's error")
    func forgedError() async throws {
        let (relyingParty, pending) = try await pending()
        let url = redirect(pending, [("error", "access_denied"), ("state", "forged"), ("iss", FakeProvider.issuer)])
        #expect(throws: SignetError(.stateMismatch, "")) { try relyingParty.handleRedirect(url, pending: pending) }
    }

    @Test("A redirect that repeats a parameter or has no code is malformed")
    func malformed() async throws {
        let (relyingParty, pending) = try await pending()
        let repeated = redirect(pending, [("code", "a"), ("code", "b"), ("state", pending.state), ("iss", FakeProvider.issuer)])
        #expect(throws: SignetError(.malformedMessage, "")) { try relyingParty.handleRedirect(repeated, pending: pending) }
        let noCode = redirect(pending, [("state", pending.state), ("iss", FakeProvider.issuer)])
        #expect(throws: SignetError(.malformedMessage, "")) { try relyingParty.handleRedirect(noCode, pending: pending) }
    }
}
