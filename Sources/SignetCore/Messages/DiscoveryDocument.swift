// OpenID Provider metadata (OpenID Connect Discovery 1.0 §3, RFC 8414).

/// The provider's metadata served at `/.well-known/openid-configuration`.
public struct DiscoveryDocument: Sendable, Codable, Equatable {
    /// issuer — Discovery §3
    public var issuer: String
    /// authorization_endpoint — Discovery §3
    public var authorizationEndpoint: String
    /// token_endpoint — Discovery §3
    public var tokenEndpoint: String
    /// userinfo_endpoint — Discovery §3
    public var userinfoEndpoint: String
    /// jwks_uri — Discovery §3
    public var jwksURI: String
    /// revocation_endpoint — RFC 8414 §2
    public var revocationEndpoint: String
    /// end_session_endpoint — OIDC RP-Initiated Logout §2.1
    public var endSessionEndpoint: String
    public var scopesSupported: [String]
    public var responseTypesSupported: [String]
    public var responseModesSupported: [String]
    public var grantTypesSupported: [String]
    public var subjectTypesSupported: [String]
    public var idTokenSigningAlgValuesSupported: [String]
    public var tokenEndpointAuthMethodsSupported: [String]
    public var tokenEndpointAuthSigningAlgValuesSupported: [String]
    public var revocationEndpointAuthMethodsSupported: [String]
    public var codeChallengeMethodsSupported: [String]
    public var claimsSupported: [String]
    public var promptValuesSupported: [String]
    public var acrValuesSupported: [String]
    public var uiLocalesSupported: [String]
    /// authorization_response_iss_parameter_supported — RFC 9207 §3
    public var authorizationResponseIssParameterSupported: Bool
    public var claimsParameterSupported: Bool
    public var requestParameterSupported: Bool
    /// request_object_signing_alg_values_supported — RFC 9101 §10.1, OIDC Discovery §3.
    public var requestObjectSigningAlgValuesSupported: [String]?
    /// dpop_signing_alg_values_supported — RFC 9449 §5.1.
    public var dpopSigningAlgValuesSupported: [String]?
    /// pushed_authorization_request_endpoint — RFC 9126 §5; absent when PAR is not offered.
    public var pushedAuthorizationRequestEndpoint: String?
    /// require_pushed_authorization_requests — RFC 9126 §5: every client must push its requests.
    public var requirePushedAuthorizationRequests: Bool?
    /// tls_client_certificate_bound_access_tokens — RFC 8705 §3.3: tokens are bound to the
    /// client certificate of the token request (Signet: an activated device's).
    public var tlsClientCertificateBoundAccessTokens: Bool?
    public var requestURIParameterSupported: Bool

    public init(
        issuer: String, authorizationEndpoint: String, tokenEndpoint: String, userinfoEndpoint: String, jwksURI: String, revocationEndpoint: String,
        endSessionEndpoint: String, scopesSupported: [String], responseTypesSupported: [String], responseModesSupported: [String],
        grantTypesSupported: [String], subjectTypesSupported: [String], idTokenSigningAlgValuesSupported: [String],
        tokenEndpointAuthMethodsSupported: [String], tokenEndpointAuthSigningAlgValuesSupported: [String],
        revocationEndpointAuthMethodsSupported: [String], codeChallengeMethodsSupported: [String], claimsSupported: [String],
        promptValuesSupported: [String], acrValuesSupported: [String], uiLocalesSupported: [String], authorizationResponseIssParameterSupported: Bool,
        claimsParameterSupported: Bool, requestParameterSupported: Bool, requestURIParameterSupported: Bool
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.jwksURI = jwksURI
        self.revocationEndpoint = revocationEndpoint
        self.endSessionEndpoint = endSessionEndpoint
        self.scopesSupported = scopesSupported
        self.responseTypesSupported = responseTypesSupported
        self.responseModesSupported = responseModesSupported
        self.grantTypesSupported = grantTypesSupported
        self.subjectTypesSupported = subjectTypesSupported
        self.idTokenSigningAlgValuesSupported = idTokenSigningAlgValuesSupported
        self.tokenEndpointAuthMethodsSupported = tokenEndpointAuthMethodsSupported
        self.tokenEndpointAuthSigningAlgValuesSupported = tokenEndpointAuthSigningAlgValuesSupported
        self.revocationEndpointAuthMethodsSupported = revocationEndpointAuthMethodsSupported
        self.codeChallengeMethodsSupported = codeChallengeMethodsSupported
        self.claimsSupported = claimsSupported
        self.promptValuesSupported = promptValuesSupported
        self.acrValuesSupported = acrValuesSupported
        self.uiLocalesSupported = uiLocalesSupported
        self.authorizationResponseIssParameterSupported = authorizationResponseIssParameterSupported
        self.claimsParameterSupported = claimsParameterSupported
        self.requestParameterSupported = requestParameterSupported
        self.requestURIParameterSupported = requestURIParameterSupported
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case scopesSupported = "scopes_supported"
        case responseTypesSupported = "response_types_supported"
        case responseModesSupported = "response_modes_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case claimsSupported = "claims_supported"
        case promptValuesSupported = "prompt_values_supported"
        case acrValuesSupported = "acr_values_supported"
        case uiLocalesSupported = "ui_locales_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case claimsParameterSupported = "claims_parameter_supported"
        case requestParameterSupported = "request_parameter_supported"
        case requestURIParameterSupported = "request_uri_parameter_supported"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case requestObjectSigningAlgValuesSupported = "request_object_signing_alg_values_supported"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case tlsClientCertificateBoundAccessTokens = "tls_client_certificate_bound_access_tokens"
    }
}
