// The parameters of an authorization request, made with secure defaults or handed over by a backend.
import Foundation
import SignetCore

/// What an authorization request (browser or native login) sends, and what the app keeps.
///
/// Made by ``init(clientID:redirectURI:scope:acrValues:uiLocales:nonce:random:)`` with a fresh PKCE verifier, state
/// and nonce; or, in the pattern where the service's backend holds the verifier (Singpass),
/// from the challenge, state and nonce the backend hands the app (``codeVerifier`` is then `nil`
/// and the code goes back to the backend).
public struct AuthorizationParameters: Sendable, Equatable, Codable {
    public var clientID: String
    public var redirectURI: String
    /// scope — RFC 6749 §3.3
    public var scope: String
    /// state — RFC 6749 §4.1.1
    public var state: String
    /// nonce — OIDC Core §3.1.2.1
    public var nonce: String?
    /// code_challenge — RFC 7636 §4.2 (S256)
    public var codeChallenge: String
    /// The PKCE verifier, when this app made it; `nil` when a backend holds it.
    public var codeVerifier: String?
    /// acr_values — OIDC Core §3.1.2.1 (`urn:signet:loa:2` asks for two factors)
    public var acrValues: String?
    /// ui_locales — OIDC Core §3.1.2.1
    public var uiLocales: String?
    /// dpop_jkt — RFC 9449 §10: the thumbprint of the DPoP key the code will be redeemed with.
    public var dpopJKT: String?

    /// Fresh parameters: a new PKCE verifier (S256), state and nonce.
    ///
    /// - Parameter nonce: nonce — OIDC Core §3.1.2.1; `nil` (the default) makes a fresh one. A
    ///   device activation passes its instance id here (``DeviceEnrolment``).
    public init(
        clientID: String, redirectURI: String, scope: String = "openid", acrValues: String? = nil, uiLocales: String? = nil, nonce: String? = nil,
        random: SecureRandom = SecureRandom()
    ) {
        let verifier = PKCE.makeVerifier(random: random)
        self.init(
            clientID: clientID, redirectURI: redirectURI, scope: scope, state: random.token(byteCount: 16),
            nonce: nonce ?? random.token(byteCount: 16),
            codeChallenge: PKCE.challenge(for: verifier), codeVerifier: verifier, acrValues: acrValues, uiLocales: uiLocales)
    }

    /// Parameters handed over by a backend that keeps the verifier itself.
    public init(
        clientID: String, redirectURI: String, scope: String, state: String, nonce: String?, codeChallenge: String, codeVerifier: String? = nil,
        acrValues: String? = nil, uiLocales: String? = nil
    ) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.codeVerifier = codeVerifier
        self.acrValues = acrValues
        self.uiLocales = uiLocales
    }

    /// The wire parameters (the verifier is never sent here).
    public var formParameters: FormParameters {
        var parameters = FormParameters()
        parameters.append(OAuthParameter.responseType, "code")
        parameters.append(OAuthParameter.clientID, clientID)
        parameters.append(OAuthParameter.redirectURI, redirectURI)
        parameters.append(OAuthParameter.scope, scope)
        parameters.append(OAuthParameter.state, state)
        parameters.append(OAuthParameter.nonce, nonce)
        parameters.append(OAuthParameter.codeChallenge, codeChallenge)
        parameters.append(OAuthParameter.codeChallengeMethod, PKCE.method)
        parameters.append(OAuthParameter.acrValues, acrValues)
        parameters.append(OAuthParameter.uiLocales, uiLocales)
        parameters.append(OAuthParameter.dpopJKT, dpopJKT)
        return parameters
    }
}

/// A browser authorization request: the URL to open and the parameters to keep.
public struct AppAuthorizationRequest: Sendable, Equatable {
    public var url: URL
    public var parameters: AuthorizationParameters
}
