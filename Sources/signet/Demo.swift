// `signet demo`: play an app and its backend against a running provider, step by step.
import ArgumentParser
import Crypto
import Foundation
import SignetClient
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play an app and its backend against a running `signet serve`: the whole OpenID Connect flow.",
        discussion: """
            Reads the demo clients and user from the data folder (demo.json, written by the first `signet serve`).
            The backend builds the request (PKCE, state, nonce) and keeps the verifier; the app's browser signs in;
            the backend redeems the code with private_key_jwt, validates the ID token, calls userinfo, refreshes,
            revokes, and logs out. Exits non-zero if any step fails.
            """)

    @Option(name: .customLong("data-dir"), help: "The server's data folder (env SIGNET_DATA_DIR). Default ./.signet")
    var dataDirectory: String?

    @Option(help: "The issuer to talk to. Default: the one in demo.json")
    var issuer: String?

    @Flag(help: "Play the native login instead: the app's own screens through SignetClient, with the SMS code from the development outbox.")
    var native = false

    @Flag(
        help:
            "Play FAPI 2.0 instead: the backend pushes a signed request with private_key_jwt and DPoP, the app carries only the request_uri, every token is bound to the backend's key."
    )
    var fapi = false

    @Flag(
        help:
            "Play an app installation instead (needs `signet serve --dev-tls`): activation, a call over mutual TLS, reactivation, a lock from elsewhere, and the refusals after it."
    )
    var device = false

    func run() async throws {
        let folder = URL(fileURLWithPath: dataDirectory ?? Environment.value("DATA_DIR") ?? ".signet")
        let seed: DemoSeed
        do { seed = try DemoSeed.load(dataDirectory: folder) } catch { throw ValidationError("\(error)") }
        let narrator = Narrator()
        do {
            if native {
                try await NativeDemoScript(seed: seed, issuer: issuer ?? seed.issuer, dataDirectory: folder, narrator: narrator).run()
            } else if device {
                try await runDevice(seed: seed, dataDirectory: folder, narrator: narrator)
            } else if fapi {
                let user = (seed.username, seed.password)
                let userAgent = ScriptedUserAgent { url, _ in try await LoginForm.redirect(for: url, username: user.0, password: user.1) }
                try await FAPIDemoScript(seed: seed, issuer: issuer ?? seed.issuer, narrator: narrator, userAgent: userAgent).run()
            } else {
                try await DemoScript(seed: seed, issuer: issuer ?? seed.issuer, narrator: narrator).run()
            }
            narrator.finish("All steps passed.")
        } catch {
            narrator.fail("\(error)")
            throw ExitCode.failure
        }
    }
}

extension Demo {
    /// The device demo, its installation's sealed key in a temporary folder removed after.
    func runDevice(seed: DemoSeed, dataDirectory: URL, narrator: Narrator) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-demo-device-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let roots = try DevelopmentTLS.caFile(dataDirectory: dataDirectory).map { [try String(contentsOfFile: $0, encoding: .utf8)] } ?? []
        try await Installation.with(
            client: .init(issuer: issuer ?? seed.issuer, clientID: seed.nativeClientID, redirectURI: seed.nativeRedirectURI),
            keyStore: SoftwareDeviceKeyStore(directory: folder, encryptionKey: SymmetricKey(size: .bits256)), trustRoots: roots,
            username: seed.username, password: seed.password, codes: SMSCodes(outbox: dataDirectory)
        ) { installation in
            try await DeviceDemoScript(installation: installation, narrator: narrator, facetID: seed.facetID ?? DemoSeed.demoFacetID).run()
        }
    }
}

/// Prints numbered steps.
final class Narrator: Sendable {
    func step(_ title: String, _ detail: String = "") {
        print("✓ \(title)\(detail.isEmpty ? "" : "\n    \(detail)")")
    }
    func finish(_ message: String) { print("\n\(message)") }
    func fail(_ message: String) { print("✗ \(message)") }
}

/// The demo's steps, in order.
struct DemoScript {
    let seed: DemoSeed
    let issuer: String
    let narrator: Narrator

    func run() async throws {
        let keyPair = try seed.backendKey()
        let backend = RelyingParty(
            configuration: RelyingPartyConfiguration(
                issuer: issuer, clientID: seed.backendClientID,
                clientAuthentication: .privateKeyJWT(privateKey: keyPair.privateKey, keyID: keyPair.keyID)))

        let document = try await backend.discover()
        narrator.step("Discovery", "\(issuer)/.well-known/openid-configuration → token endpoint \(document.tokenEndpoint)")

        let redirectURI = seed.backendRedirectURIs[0]
        let request = try await backend.makeAuthorizationRequest(redirectURI: redirectURI, scope: "openid profile email")
        narrator.step(
            "Backend built the authorization request (PKCE S256, state, nonce; it keeps the verifier)", request.url.absoluteString.prefix(110) + "…")

        let browser = ScriptedBrowser()
        let page = try await browser.get(request.url.absoluteString)
        guard page.status == 200, let fields = LoginForm.fields(in: page.body) else {
            throw SignetError(.malformedMessage, "the authorization endpoint did not show the login page (HTTP \(page.status))")
        }
        narrator.step("App opened the hosted login page", "CSP: \(page.header("Content-Security-Policy") ?? "none")")

        let login = try await browser.post(
            issuer + "/login",
            form: [
                ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", seed.username), ("password", seed.password),
            ])
        guard login.status == 303, let location = login.header("Location"), let redirect = URL(string: location) else {
            throw SignetError(.malformedMessage, "login did not redirect (HTTP \(login.status))")
        }
        narrator.step("User signed in as \(seed.username); the provider redirected to the app", "\(redirect.scheme ?? ""):… with code, state and iss")

        let completed = try await backend.completeAuthorization(redirect: redirect, pending: request.pending)
        narrator.step(
            "Backend redeemed the code with private_key_jwt and validated the ID token (OIDC Core §3.1.3.7)",
            "sub \(completed.idToken.sub), acr \(completed.idToken.acr ?? "-"), amr \(completed.idToken.amr ?? []), at_hash checked")

        let userInfo = try await backend.userInfo(accessToken: completed.tokens.accessToken, expectedSubject: completed.idToken.sub)
        narrator.step("UserInfo", userInfo.claims.keys.sorted().joined(separator: ", "))

        guard let refreshToken = completed.tokens.refreshToken else { throw SignetError(.malformedMessage, "no refresh token was issued") }
        let refreshed = try await backend.refresh(refreshToken)
        guard let rotated = refreshed.refreshToken, rotated != refreshToken else {
            throw SignetError(.malformedMessage, "the refresh token was not rotated")
        }
        narrator.step("Refreshed: new access token, refresh token rotated")

        try await backend.revoke(rotated, hint: "refresh_token")
        do {
            _ = try await backend.refresh(rotated)
            throw SignetError(.malformedMessage, "a revoked refresh token still worked")
        } catch let error as SignetError where error.code == .oauth && error.oauthError?.error == .invalidGrant {
            narrator.step("Revoked the refresh token; using it again is refused with invalid_grant")
        }

        let logoutURL = try await backend.endSessionURL(
            idTokenHint: completed.tokens.idToken, postLogoutRedirectURI: seed.postLogoutRedirectURI, state: "demo-logout")
        let logout = try await browser.get(logoutURL.absoluteString)
        guard logout.status == 302, logout.header("Location")?.hasPrefix(seed.postLogoutRedirectURI) == true else {
            throw SignetError(.malformedMessage, "logout did not return to \(seed.postLogoutRedirectURI) (HTTP \(logout.status))")
        }
        narrator.step("Logged out (RP-initiated); back at \(logout.header("Location") ?? "")")
    }
}
