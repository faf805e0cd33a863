// Clients as RFC 7591 client metadata: the admin API's body and `signet clients import|export`.
import Foundation
import SignetCore
import SignetStore

/// A client in the names of RFC 7591 §2 (with RFC 9126, RFC 9101 and RFC 9449's registered
/// members, and `signet_…` for what no registry names), so clients can be kept as code.
public struct ClientMetadata: Codable, Sendable, Equatable {
    public var clientID: String?
    public var clientName: String?
    /// `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`; RFC 7591's default is `client_secret_basic`.
    public var tokenEndpointAuthMethod: String?
    public var redirectURIs: [String]?
    /// OpenID Connect RP-Initiated Logout §3.1.
    public var postLogoutRedirectURIs: [String]?
    /// `authorization_code`, and `refresh_token` when the client may refresh.
    public var grantTypes: [String]?
    public var responseTypes: [String]?
    /// The API scopes besides the OpenID ones, space-separated (RFC 7591 §2).
    public var scope: String?
    public var jwks: PublicJWKS?
    public var jwksURI: String?
    /// RFC 9126 §6.
    public var requirePushedAuthorizationRequests: Bool?
    /// RFC 9101 §10.5.
    public var requireSignedRequestObject: Bool?
    /// RFC 9449 §5.2.
    public var dpopBoundAccessTokens: Bool?
    /// The least assurance every login must reach; `none` for none (so a replace can end it explicitly).
    public var signetMinimumACR: String?
    public var signetNativeLogin: Bool?
    public var signetResources: [String]?
    public var signetFAPI2: Bool?
    public var signetAppLaunchURLs: [String]?
    public var signetFacetIDs: [String]?
    public var signetAuthenticatorAAIDs: [String]?
    /// The client's own token lifetimes in seconds (``TokenLifetimes``); absent: the provider's.
    public var signetAccessTokenLifetime: Int?
    public var signetIDTokenLifetime: Int?
    public var signetRefreshTokenIdleLifetime: Int?
    public var signetRefreshTokenAbsoluteLifetime: Int?
    public var signetCodeLifetime: Int?
    /// Output only (RFC 7591 §3.2.1).
    public var clientIDIssuedAt: Int?
    /// Output only, and only when the client was just registered with a secret method.
    public var clientSecret: String?

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id", clientName = "client_name", tokenEndpointAuthMethod = "token_endpoint_auth_method"
        case redirectURIs = "redirect_uris", postLogoutRedirectURIs = "post_logout_redirect_uris", grantTypes = "grant_types"
        case responseTypes = "response_types", scope, jwks, jwksURI = "jwks_uri"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case requireSignedRequestObject = "require_signed_request_object", dpopBoundAccessTokens = "dpop_bound_access_tokens"
        case signetMinimumACR = "signet_minimum_acr", signetNativeLogin = "signet_native_login", signetResources = "signet_resources"
        case signetFAPI2 = "signet_fapi2", signetAppLaunchURLs = "signet_app_launch_urls", signetFacetIDs = "signet_facet_ids"
        case signetAccessTokenLifetime = "signet_access_token_lifetime", signetIDTokenLifetime = "signet_id_token_lifetime"
        case signetRefreshTokenIdleLifetime = "signet_refresh_token_idle_lifetime", signetRefreshTokenAbsoluteLifetime =
            "signet_refresh_token_absolute_lifetime"
        case signetCodeLifetime = "signet_code_lifetime"
        case signetAuthenticatorAAIDs = "signet_authenticator_aaids", clientIDIssuedAt = "client_id_issued_at", clientSecret = "client_secret"
    }

    public init() {}

    /// The metadata of a registered client (never its secret).
    public init(_ client: ClientRecord) {
        clientID = client.id
        clientName = client.name
        tokenEndpointAuthMethod = client.authMethod.rawValue
        redirectURIs = client.redirectURIs
        postLogoutRedirectURIs = client.postLogoutRedirectURIs
        grantTypes = client.allowsRefreshTokens ? ["authorization_code", "refresh_token"] : ["authorization_code"]
        responseTypes = ["code"]
        let apiScopes = client.allowedScopes.filter { !AuthorizationRequestValidator.supportedScopes.contains($0) }
        scope = apiScopes.isEmpty ? nil : apiScopes.joined(separator: " ")
        jwks = client.jwks.flatMap { try? JSONDecoder().decode(PublicJWKS.self, from: Data($0.utf8)) }
        jwksURI = client.jwksURI
        requirePushedAuthorizationRequests = client.requirePushedAuthorizationRequests
        requireSignedRequestObject = client.requireSignedRequestObject
        dpopBoundAccessTokens = client.requireDPoP
        signetMinimumACR = client.minimumACR
        signetNativeLogin = client.nativeLogin
        signetResources = client.resources
        signetFAPI2 = client.fapi2
        signetAppLaunchURLs = client.appLaunchURLs
        signetFacetIDs = client.facetIDs
        signetAuthenticatorAAIDs = client.authenticatorAAIDs
        signetAccessTokenLifetime = client.accessTokenLifetime.map { Int($0) }
        signetIDTokenLifetime = client.idTokenLifetime.map { Int($0) }
        signetRefreshTokenIdleLifetime = client.refreshTokenIdleLifetime.map { Int($0) }
        signetRefreshTokenAbsoluteLifetime = client.refreshTokenAbsoluteLifetime.map { Int($0) }
        signetCodeLifetime = client.codeLifetime.map { Int($0) }
        clientIDIssuedAt = Int(client.createdAt.timeIntervalSince1970)
    }

    /// The client to register, checked against RFC 7591's rules; a bad member throws
    /// ``ClientMetadataError`` with `invalid_redirect_uri` or `invalid_client_metadata`.
    public func newClient(id fallbackID: String? = nil) throws -> SignetAdmin.NewClient {
        guard let id = clientID ?? fallbackID, !id.isEmpty else { throw ClientMetadataError.metadata("client_id is missing") }
        let method = tokenEndpointAuthMethod ?? ClientRecord.AuthMethod.clientSecretBasic.rawValue
        guard let authMethod = ClientRecord.AuthMethod(rawValue: method) else {
            throw ClientMetadataError.metadata(
                "token_endpoint_auth_method must be one of \(ClientRecord.AuthMethod.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let redirects = redirectURIs, !redirects.isEmpty else {
            throw ClientMetadataError.redirectURI("redirect_uris must name at least one URI")
        }
        for uri in redirects + (postLogoutRedirectURIs ?? []) {
            if case .failure(let problem) = RedirectURI.classify(uri) { throw ClientMetadataError.redirectURI("\(uri) \(problem.rawValue)") }
        }
        let grants = grantTypes ?? ["authorization_code"]
        guard grants.contains("authorization_code"), grants.allSatisfy(["authorization_code", "refresh_token"].contains) else {
            throw ClientMetadataError.metadata("grant_types must be authorization_code, with refresh_token or not")
        }
        guard (responseTypes ?? ["code"]) == ["code"] else { throw ClientMetadataError.metadata("response_types must be [\"code\"]") }
        var jwksText: String?
        if let jwks {
            let data = try JSONEncoder().encode(jwks)
            jwksText = String(decoding: data, as: UTF8.self)
        }
        var new = SignetAdmin.NewClient(
            id: id, name: clientName ?? id, authMethod: authMethod, redirectURIs: redirects, postLogoutRedirectURIs: postLogoutRedirectURIs ?? [],
            jwks: jwksText, jwksURI: jwksURI, allowsRefreshTokens: grants.contains("refresh_token"),
            minimumACR: signetMinimumACR == "none" ? nil : signetMinimumACR,
            nativeLogin: signetNativeLogin ?? false)
        new.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests ?? false
        new.requireSignedRequestObject = requireSignedRequestObject ?? false
        new.requireDPoP = dpopBoundAccessTokens ?? false
        new.resources = signetResources ?? []
        new.fapi2 = signetFAPI2 ?? false
        new.appLaunchURLs = signetAppLaunchURLs ?? []
        new.apiScopes = (scope ?? "").split(separator: " ").map(String.init).filter { !AuthorizationRequestValidator.supportedScopes.contains($0) }
        new.facetIDs = signetFacetIDs ?? []
        new.authenticatorAAIDs = signetAuthenticatorAAIDs
        new.accessTokenLifetime = signetAccessTokenLifetime.map(TimeInterval.init)
        new.idTokenLifetime = signetIDTokenLifetime.map(TimeInterval.init)
        new.refreshTokenIdleLifetime = signetRefreshTokenIdleLifetime.map(TimeInterval.init)
        new.refreshTokenAbsoluteLifetime = signetRefreshTokenAbsoluteLifetime.map(TimeInterval.init)
        new.codeLifetime = signetCodeLifetime.map(TimeInterval.init)
        return new
    }

    /// Reads metadata, refusing private key members in `jwks` (which ``PublicJWKS`` would drop unseen).
    public static func decode(_ data: Data) throws -> ClientMetadata {
        try JWKSPrivateMembers.refuse(in: data)
        do {
            return try JSONDecoder().decode(ClientMetadata.self, from: data)
        } catch {
            throw ClientMetadataError.metadata("the body is not client metadata: \(Self.describe(error))")
        }
    }

    /// Reads a list of metadata (`signet clients import`).
    public static func decodeList(_ data: Data) throws -> [ClientMetadata] {
        try JWKSPrivateMembers.refuse(in: data)
        do {
            return try JSONDecoder().decode([ClientMetadata].self, from: data)
        } catch {
            throw ClientMetadataError.metadata("the file is not a JSON array of client metadata: \(Self.describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context), DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default: return "malformed JSON"
        }
    }
}

/// RFC 7591 §3.2.2's errors.
public struct ClientMetadataError: Error, Sendable, Equatable {
    /// `invalid_redirect_uri` or `invalid_client_metadata`.
    public let error: String
    public let description: String

    public init(error: String, description: String) { (self.error, self.description) = (error, description) }

    static func redirectURI(_ description: String) -> Self { Self(error: "invalid_redirect_uri", description: description) }
    static func metadata(_ description: String) -> Self { Self(error: "invalid_client_metadata", description: description) }
}

/// Finds private-key members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `k`) in any `jwks` of a JSON text.
enum JWKSPrivateMembers {
    static let names: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "k", "oth"]

    static func refuse(in data: Data) throws {
        guard let object = try? JSONSerialization.jsonObject(with: data) else { return }
        let documents = (object as? [Any]) ?? [object]
        for case let document as [String: Any] in documents {
            guard let jwks = document["jwks"] as? [String: Any], let keys = jwks["keys"] as? [Any] else { continue }
            for case let key as [String: Any] in keys where !names.isDisjoint(with: key.keys) {
                throw ClientMetadataError.metadata("jwks must hold public keys only")
            }
        }
    }
}
