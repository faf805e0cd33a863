// /.well-known/openid-configuration and /jwks — OpenID Connect Discovery 1.0 §4, RFC 7517 §5.
import Hummingbird
import SignetCore
import SignetStore

/// Publishes exactly what the provider supports, and its public keys.
struct DiscoveryEndpoint: Sendable {
    let server: ServerContext
    let keyRing: KeyRing
    let requirePushedAuthorizationRequests: Bool
    /// Whether client certificates can reach the provider (its own TLS or a trusted proxy's header).
    let acceptsClientCertificates: Bool

    var document: DiscoveryDocument {
        var document = DiscoveryDocument(
            issuer: server.issuer,
            authorizationEndpoint: server.endpoint("/authorize"),
            tokenEndpoint: server.endpoint("/token"),
            userinfoEndpoint: server.endpoint("/userinfo"),
            jwksURI: server.endpoint("/jwks"),
            revocationEndpoint: server.endpoint("/revoke"),
            endSessionEndpoint: server.endpoint("/logout"),
            scopesSupported: AuthorizationRequestValidator.supportedScopes,
            responseTypesSupported: ["code"],
            responseModesSupported: ["query"],
            grantTypesSupported: ["authorization_code", "refresh_token"],
            subjectTypesSupported: ["public"],
            idTokenSigningAlgValuesSupported: ["ES256"],
            tokenEndpointAuthMethodsSupported: ClientRecord.AuthMethod.allCases.map(\.rawValue),
            tokenEndpointAuthSigningAlgValuesSupported: JOSEHeader.acceptedAlgorithms.sorted(),
            revocationEndpointAuthMethodsSupported: ClientRecord.AuthMethod.allCases.map(\.rawValue),
            codeChallengeMethodsSupported: [PKCE.method],
            claimsSupported: [
                "iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "nonce", "acr", "amr", "at_hash", "sid", "name",
                "preferred_username", "email", "phone_number", DeviceInstances.claim,
            ],
            promptValuesSupported: ["none", "login"],
            acrValuesSupported: [AuthorizationRequestValidator.acrOneFactor, AuthorizationRequestValidator.acrTwoFactors],
            uiLocalesSupported: AuthorizationRequestValidator.supportedUILocales,
            authorizationResponseIssParameterSupported: true,
            // Only a request for instance_id (issue 8) is acted on; other members are voluntary and ignored (OIDC Core §5.5).
            claimsParameterSupported: true,
            requestParameterSupported: true,
            requestURIParameterSupported: false)
        document.pushedAuthorizationRequestEndpoint = server.endpoint("/par")
        document.requestObjectSigningAlgValuesSupported = JOSEHeader.acceptedAlgorithms.sorted()
        document.dpopSigningAlgValuesSupported = JOSEHeader.acceptedAlgorithms.sorted()
        document.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        // Client certificates reach Signet through its own TLS or a trusted proxy's header.
        document.tlsClientCertificateBoundAccessTokens = acceptsClientCertificates
        return document
    }

    func configuration(_ request: Request, context: SignetRequestContext) async throws -> Response {
        JSONResponse.make(document, cacheable: true)
    }

    func jwks(_ request: Request, context: SignetRequestContext) async throws -> Response {
        JSONResponse.make(try await keyRing.jwks(), cacheable: true)
    }
}
