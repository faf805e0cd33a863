// What a relying party needs to know about itself and its provider.
import Crypto
import Foundation

/// The settings of one relying party (OAuth client) at one OpenID provider.
///
/// A plain value with safe defaults. Everything else — endpoints, keys, supported
/// features — is learnt from the provider's discovery document.
public struct RelyingPartyConfiguration: Sendable {
    /// The provider's issuer identifier — OIDC Discovery §2, e.g. `https://id.example.com`.
    ///
    /// Compared exactly, character for character, with the discovery document's
    /// `issuer`, the ID token's `iss` and the authorization response's `iss` (RFC 9207).
    public var issuer: String
    /// client_id — RFC 6749 §2.2, as registered at the provider.
    public var clientID: String
    /// How the client proves its identity at the token and revocation endpoints — RFC 6749 §2.3.
    public var clientAuthentication: ClientAuthentication
    /// How far the provider's clock and ours may disagree, in seconds, when checking `exp`, `iat` and `auth_time`. Default 60.
    public var clockLeeway: Int
    /// The shortest time between two JWKS fetches caused by an unknown `kid`, in seconds. Default 60.
    ///
    /// Bounds how often a stream of tokens with made-up key ids can make us call the provider.
    public var keySetRefetchInterval: TimeInterval
    /// How long a fetched JWKS is trusted before it is fetched again, in seconds. Default one day.
    ///
    /// Lets keys the provider withdrew stop being trusted even if no token names an unknown key.
    public var keySetMaximumAge: TimeInterval
    /// The backend's DPoP key (RFC 9449): when set, token and PAR requests carry a proof and the
    /// tokens are bound to it; UserInfo calls use the DPoP scheme. `nil`: bearer tokens.
    public var dpopKey: P256.Signing.PrivateKey?

    /// A configuration with documented defaults.
    ///
    /// - Parameters:
    ///   - issuer: the provider's issuer identifier; `https`, or `http` on a loopback host for development.
    ///   - clientID: the registered client_id.
    ///   - clientAuthentication: how to authenticate at the token endpoint; `.none` for public clients.
    ///   - clockLeeway: allowed clock skew in seconds.
    ///   - keySetRefetchInterval: the shortest time between JWKS fetches caused by unknown key ids.
    ///   - keySetMaximumAge: how long fetched keys are trusted before they are fetched again.
    public init(
        issuer: String,
        clientID: String,
        clientAuthentication: ClientAuthentication,
        clockLeeway: Int = 60,
        keySetRefetchInterval: TimeInterval = 60,
        keySetMaximumAge: TimeInterval = 86_400,
        dpopKey: P256.Signing.PrivateKey? = nil
    ) {
        self.dpopKey = dpopKey
        self.issuer = issuer
        self.clientID = clientID
        self.clientAuthentication = clientAuthentication
        self.clockLeeway = clockLeeway
        self.keySetRefetchInterval = keySetRefetchInterval
        self.keySetMaximumAge = keySetMaximumAge
    }
}

/// How a client authenticates to the provider's token and revocation endpoints.
///
/// Prints with its secrets as `****`, so configurations can be logged.
public enum ClientAuthentication: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// private_key_jwt — OIDC Core §9, RFC 7523 §2.2: a short-lived JWT signed with the client's P-256 key (ES256).
    ///
    /// The strongest choice: no shared secret exists, and the provider holds only the public key.
    /// `keyID` is the `kid` of the registered public key.
    case privateKeyJWT(privateKey: P256.Signing.PrivateKey, keyID: String)
    /// client_secret_basic — RFC 6749 §2.3.1: the id and secret in an HTTP Basic `Authorization` header.
    case clientSecretBasic(String)
    /// client_secret_post — RFC 6749 §2.3.1: the id and secret as form parameters.
    case clientSecretPost(String)
    /// none — OIDC Core §9: a public client, which sends only its client_id and relies on PKCE.
    case none

    /// The token_endpoint_auth_method name — OIDC Dynamic Client Registration §2.
    public var methodName: String {
        switch self {
        case .privateKeyJWT: "private_key_jwt"
        case .clientSecretBasic: "client_secret_basic"
        case .clientSecretPost: "client_secret_post"
        case .none: "none"
        }
    }

    /// The method with its secret redacted.
    public var description: String {
        switch self {
        case .privateKeyJWT(_, let keyID): "private_key_jwt(kid: \(keyID), key: ****)"
        case .clientSecretBasic: "client_secret_basic(****)"
        case .clientSecretPost: "client_secret_post(****)"
        case .none: "none"
        }
    }

    /// The same as ``description``: secrets never print.
    public var debugDescription: String { description }

    /// No children, so `dump` and reflection print no secret either.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
}
