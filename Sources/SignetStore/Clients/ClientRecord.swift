// A registered OAuth client and where clients are kept.
import Foundation
import SignetCore

/// A registered OAuth client — RFC 7591 §2 names the fields.
public struct ClientRecord: Sendable, Equatable {
    /// How a client proves who it is at the token endpoint — RFC 7591 §2 `token_endpoint_auth_method`.
    public enum AuthMethod: String, Sendable, Codable, CaseIterable {
        case none
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        case privateKeyJWT = "private_key_jwt"

        /// Whether the client authenticates with a shared secret.
        public var usesSecret: Bool { self == .clientSecretBasic || self == .clientSecretPost }
    }

    /// client_id
    public var id: String
    /// client_name
    public var name: String
    public var authMethod: AuthMethod
    /// SHA-256 of the client secret (hex), for the secret methods. Secrets are 256-bit random, so a fast hash suffices.
    public var secretHash: String?
    /// redirect_uris, matched exactly (loopback: any port).
    public var redirectURIs: [String]
    /// post_logout_redirect_uris — RP-Initiated Logout §3.1
    public var postLogoutRedirectURIs: [String]
    /// jwks — the client's public keys as JWKS JSON, for private_key_jwt.
    public var jwks: String?
    /// jwks_uri — where the client publishes its keys, for private_key_jwt.
    public var jwksURI: String?
    /// The scopes the client may ask for.
    public var allowedScopes: [String]
    /// Whether the client receives refresh tokens.
    public var allowsRefreshTokens: Bool
    /// The native login scenarios the client may use; `nil` means all.
    public var loginScenarios: [LoginScenario]?
    /// min_acr: the least assurance every login for this client must reach, whatever its
    /// `acr_values` ask (an attacker can edit those); `nil`: what the request asks.
    public var minimumACR: String?
    /// Whether the client may use the native login API. It returns codes without a browser
    /// redirect, so it is off unless the client is registered for it.
    public var nativeLogin: Bool
    /// require_pushed_authorization_requests — RFC 9126 §6: its requests must come through `/par`.
    public var requirePushedAuthorizationRequests: Bool
    /// require_signed_request_object — RFC 9101 §10.5: its requests must be signed request objects.
    public var requireSignedRequestObject: Bool
    /// The `app_launch_url` values the client may send (https, exact match).
    public var appLaunchURLs: [String]
    /// dpop_bound_access_tokens — RFC 9449 §5.2: the client's tokens must be DPoP-bound.
    public var requireDPoP: Bool
    /// The resources (RFC 8707) the client may ask tokens for; the first is its default audience.
    public var resources: [String]
    /// Whether the client follows the FAPI 2.0 Security Profile: see ``FAPI2Profile`` for every
    /// rule this turns on, at registration and on each request.
    public var fapi2: Bool
    /// The FIDO UAF authenticators (AAIDs) the client's users may register; `nil`: every one of
    /// ``AuthenticatorCatalog`` (docs/authenticators.md).
    public var authenticatorAAIDs: [String]?
    /// The app's trusted facet ids (`ios:bundle-id:…`, `android:apk-key-hash:…`), served at its
    /// UAF `appID` (FIDO AppID and Facet §3); a UAF response from any other facet is refused.
    public var facetIDs: [String]
    /// The client's own access token lifetime in seconds; `nil`: the provider's (`tokens.accessTokenLifetime`).
    public var accessTokenLifetime: TimeInterval?
    /// The client's own ID token lifetime in seconds; `nil`: the provider's.
    public var idTokenLifetime: TimeInterval?
    /// How long the client's refresh tokens may go unused, in seconds; `nil`: the provider's.
    public var refreshTokenIdleLifetime: TimeInterval?
    /// How long the client's grants last however often refreshed, in seconds; `nil`: the provider's.
    public var refreshTokenAbsoluteLifetime: TimeInterval?
    /// How long the client's authorization codes live, in seconds; `nil`: the provider's.
    public var codeLifetime: TimeInterval?
    public var createdAt: Date

    public init(
        id: String, name: String, authMethod: AuthMethod, secretHash: String? = nil, redirectURIs: [String], postLogoutRedirectURIs: [String] = [],
        jwks: String? = nil, jwksURI: String? = nil, allowedScopes: [String] = ["openid", "profile", "email", "phone", "offline_access"],
        allowsRefreshTokens: Bool = true, minimumACR: String? = nil, nativeLogin: Bool = false, requirePushedAuthorizationRequests: Bool = false,
        requireSignedRequestObject: Bool = false, appLaunchURLs: [String] = [], requireDPoP: Bool = false, resources: [String] = [],
        fapi2: Bool = false, createdAt: Date
    ) {
        self.fapi2 = fapi2
        self.facetIDs = []
        self.id = id
        self.name = name
        self.authMethod = authMethod
        self.secretHash = secretHash
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.jwks = jwks
        self.jwksURI = jwksURI
        self.allowedScopes = allowedScopes
        self.allowsRefreshTokens = allowsRefreshTokens
        self.minimumACR = minimumACR
        self.nativeLogin = nativeLogin
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        self.requireSignedRequestObject = requireSignedRequestObject
        self.appLaunchURLs = appLaunchURLs
        self.requireDPoP = requireDPoP
        self.resources = resources
        self.createdAt = createdAt
    }
}

/// Registered clients.
public protocol ClientStore: Sendable {
    func client(id: String) async throws -> ClientRecord?
    /// Adds a client; throws `SignetError(.conflict)` when the id is taken.
    func insertClient(_ client: ClientRecord) async throws
    func listClients() async throws -> [ClientRecord]
    /// Replaces a client's registration; `false` when there is none.
    func replaceClient(_ client: ClientRecord) async throws -> Bool
    /// The client and an opaque token of the stored version, for ``replaceClient(_:ifVersion:)``.
    func clientForChange(id: String) async throws -> (client: ClientRecord, version: String)?
    /// Replaces the client's registration if it is still at `version` (compare-and-swap, so two
    /// administrators' changes cannot undo each other); `false` when it changed or is gone.
    func replaceClient(_ client: ClientRecord, ifVersion version: String) async throws -> Bool
    /// Removes a client; `false` when there was none.
    func deleteClient(id: String) async throws -> Bool
}

extension ClientRecord.AuthMethod: StoredValue {}

extension ClientRecord: StoredRecord {
    // Members added after the first release are optional when read: a text without them keeps
    // the blank's default (false, empty).
    public static let format = RecordFormat(
        version: 1,
        blank: ClientRecord(
            id: "", name: "", authMethod: .none, redirectURIs: [], allowedScopes: [], allowsRefreshTokens: false, createdAt: .distantPast),
        [
            .member("id", \.id), .member("name", \.name), .member("authMethod", \.authMethod), .member("secretHash", \.secretHash),
            .member("redirectURIs", \.redirectURIs), .member("postLogoutRedirectURIs", \.postLogoutRedirectURIs), .member("jwks", \.jwks),
            .member("jwksURI", \.jwksURI), .member("allowedScopes", \.allowedScopes), .member("allowsRefreshTokens", \.allowsRefreshTokens),
            .codable("loginScenarios", \.loginScenarios), .member("minimumACR", \.minimumACR), .member("nativeLogin", \.nativeLogin, required: false),
            .member("requirePushedAuthorizationRequests", \.requirePushedAuthorizationRequests, required: false),
            .member("requireSignedRequestObject", \.requireSignedRequestObject, required: false),
            .member("appLaunchURLs", \.appLaunchURLs, required: false), .member("requireDPoP", \.requireDPoP, required: false),
            .member("resources", \.resources, required: false), .member("fapi2", \.fapi2, required: false),
            .member("authenticatorAAIDs", \.authenticatorAAIDs), .member("facetIDs", \.facetIDs, required: false),
            .codable("accessTokenLifetime", \.accessTokenLifetime), .codable("idTokenLifetime", \.idTokenLifetime),
            .codable("refreshTokenIdleLifetime", \.refreshTokenIdleLifetime),
            .codable("refreshTokenAbsoluteLifetime", \.refreshTokenAbsoluteLifetime),
            .codable("codeLifetime", \.codeLifetime), .member("createdAt", \.createdAt),
        ])
}
