// `signet demo --fapi`: the FAPI 2.0 pattern Singpass asks of relying parties, step by step.
import Crypto
import Foundation
import SignetCore
import SignetRelyingParty
import SignetClient
import SignetScript
import SignetServer

/// The backend pushes a signed request and binds everything to its DPoP key; the app only
/// carries `client_id` and `request_uri` through the browser (the SDK's ``ExternalUserAgent``);
/// the API accepts the token only with a proof of that key.
struct FAPIDemoScript {
    let seed: DemoSeed
    let issuer: String
    let narrator: Narrator
    /// The app's browser; in the demo a script plays the user on the hosted login page.
    let userAgent: any ExternalUserAgent

    func run() async throws {
        guard let clientID = seed.fapiClientID, let redirectURI = seed.fapiRedirectURI, let resource = seed.fapiResource else {
            throw SignetError(
                .notFound,
                "this data folder was seeded before the FAPI 2.0 demo client existed: start `signet serve` with a fresh --data-dir, or register one with `signet clients add … --fapi2`"
            )
        }
        let key = try seed.backendKey()
        let dpopKey = P256.Signing.PrivateKey()
        let backend = RelyingParty(
            configuration: RelyingPartyConfiguration(
                issuer: issuer, clientID: clientID, clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID),
                dpopKey: dpopKey))
        let document = try await backend.discover()
        guard document.pushedAuthorizationRequestEndpoint != nil, document.dpopSigningAlgValuesSupported?.contains("ES256") == true else {
            throw SignetError(.malformedMessage, "the provider does not offer PAR and DPoP")
        }
        narrator.step(
            "Discovery",
            "PAR at \(document.pushedAuthorizationRequestEndpoint ?? ""), DPoP with \(document.dpopSigningAlgValuesSupported?.joined(separator: " ") ?? "")"
        )

        let request = try await backend.pushAuthorizationRequest(
            redirectURI: redirectURI, scope: "openid profile offline_access accounts", signed: true)
        narrator.step(
            "Backend pushed a signed request object (RFC 9126 + RFC 9101) with private_key_jwt (aud = issuer) and a DPoP proof binding the code",
            "the app gets only: \(request.url.absoluteString)")

        let redirect = try await userAgent.present(request.url, redirectURI: URL(string: redirectURI)!)
        narrator.step(
            "App opened it in the browser (SignetClient's ExternalUserAgent); the user signed in; the browser came back",
            redirect.absoluteString.prefix(100) + "…")

        let completed = try await backend.completeAuthorization(redirect: redirect, pending: request.pending)
        guard let claims = AccessTokenClaims.unverified(completed.tokens.accessToken) else {
            throw SignetError(.malformedMessage, "the access token is not a JWT")
        }
        let publicJWK = PublicJWK(p256: dpopKey.publicKey, kid: "")
        let jkt = JWKThumbprint.sha256(of: ["kty": "EC", "crv": "P-256", "x": publicJWK.x ?? "", "y": publicJWK.y ?? ""])
        guard completed.tokens.tokenType == "DPoP", let bound = claims.cnf?.jkt, bound == jkt else {
            throw SignetError(.malformedMessage, "the access token is not bound to the backend's DPoP key")
        }
        narrator.step(
            "Backend redeemed the code with private_key_jwt and a DPoP proof; ID token valid",
            "token_type DPoP, cnf.jkt \(bound.prefix(12))…, aud \(claims.aud.joined(separator: " ")), sub \(completed.idToken.sub)")

        let info = try await backend.userInfo(accessToken: completed.tokens.accessToken, expectedSubject: completed.idToken.sub)
        narrator.step("UserInfo with the DPoP scheme and a proof of the key (ath = the token's hash)", "sub \(info.sub)")

        let accessToken = completed.tokens.accessToken
        try await DemoAPI(issuer: issuer, audience: resource).run { api in
            let accounts = try await backend.send(HTTPTransportRequest(method: "GET", url: api + "/accounts"), accessToken: accessToken)
            guard accounts.status == 200 else { throw SignetError(.malformedMessage, "the API refused the bound token (HTTP \(accounts.status))") }
            narrator.step(
                "The bank API (SignetResourceServer, audience \(resource), scope accounts) accepted the token with a proof",
                String(decoding: accounts.body, as: UTF8.self))
            let stolen = try await ScriptedBrowser().get(api + "/accounts", headers: [("Authorization", "Bearer \(accessToken)")])
            guard stolen.status == 401 else { throw SignetError(.malformedMessage, "a stolen DPoP-bound token was accepted as a bearer token") }
            narrator.step(
                "The same token without the key (as a thief would send it) is refused",
                "HTTP 401, \(stolen.header("WWW-Authenticate")?.prefix(60) ?? "")")
        }

        guard let refreshToken = completed.tokens.refreshToken else { throw SignetError(.malformedMessage, "no refresh token") }
        let first = try await backend.refresh(refreshToken)
        let second = try await backend.refresh(refreshToken)
        guard first.refreshToken == nil, second.tokenType == "DPoP" else {
            throw SignetError(.malformedMessage, "the FAPI 2.0 refresh token was rotated")
        }
        narrator.step("Refreshed twice with the same refresh token (FAPI 2.0: no rotation), each with a proof", "token_type \(second.tokenType)")

        try await backend.revoke(refreshToken, hint: "refresh_token")
        do {
            _ = try await backend.refresh(refreshToken)
            throw SignetError(.malformedMessage, "a revoked refresh token still worked")
        } catch let error as SignetError where error.code == .oauth {
            narrator.step("Revoked the refresh token (RFC 7009); it no longer works", error.oauthError.map { "\($0.error.rawValue)" } ?? error.reason)
        }
    }
}
