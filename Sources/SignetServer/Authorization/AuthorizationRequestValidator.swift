// Checks an authorization request in the order that decides where errors may go.
import Foundation
import SignetCore
import SignetStore

/// What checking an authorization request decided.
public enum AuthorizationRequestDecision: Sendable, Equatable {
    /// Every check passed.
    case valid(ValidatedAuthorizationRequest, ClientRecord)
    /// The client or redirect URI cannot be trusted: show the error, never redirect (RFC 6749 §4.1.2.1).
    case showError(OAuthError)
    /// The client and redirect URI are trusted: send the error back to the client.
    case redirectError(OAuthError, redirectURI: String, state: String?)
}

/// The one implementation of the authorization request rules, shared by `/authorize`
/// and every other way of starting a login.
public struct AuthorizationRequestValidator: Sendable {
    /// Scopes the provider knows.
    public static let supportedScopes = ["openid", "profile", "email", "phone", "offline_access"]
    /// prompt values honoured — OIDC Core §3.1.2.1.
    public static let supportedPrompts = ["none", "login", "consent", "select_account"]
    /// Authentication context classes: one factor, and two factors.
    public static let acrOneFactor = AssuranceLevel.oneFactor
    public static let acrTwoFactors = AssuranceLevel.twoFactors
    public static let supportedUILocales = ["en"]

    let clients: any ClientStore
    /// Where instance ids are looked up for scope `device`; without it that scope is refused.
    let devices: (any DeviceStore)?
    let maxParameterLength: Int
    /// Whether every client must push its requests (RFC 9126 §5).
    let requirePushedRequests: Bool
    /// The current time, for instance ids' expiry.
    let now: @Sendable () -> Date

    public init(
        clients: any ClientStore, devices: (any DeviceStore)? = nil, maxParameterLength: Int, requirePushedRequests: Bool = false,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.clients = clients
        self.devices = devices
        self.now = now
        self.maxParameterLength = maxParameterLength
        self.requirePushedRequests = requirePushedRequests
    }

    /// Checks the parameters of an authorization request.
    ///
    /// The client and the redirect URI are checked first: until both are trusted,
    /// every error is shown to the user rather than sent to a URI nobody vouched for.
    ///
    /// - Parameters:
    ///   - pushed: the parameters came through `/par` (RFC 9126), from an authenticated client.
    ///   - signed: the parameters came from a verified request object (RFC 9101).
    public func validate(_ parameters: FormParameters, pushed: Bool = false, signed: Bool = false) async throws -> AuthorizationRequestDecision {
        let duplicated = Set(parameters.duplicatedNames)
        if duplicated.contains(OAuthParameter.clientID) || duplicated.contains(OAuthParameter.redirectURI) {
            return .showError(OAuthError(.invalidRequest, "client_id and redirect_uri must appear once"))
        }
        if let oversized = parameters.pairs.first(where: { $0.value.utf8.count > maxParameterLength || $0.name.utf8.count > 128 }),
            [OAuthParameter.clientID, OAuthParameter.redirectURI].contains(oversized.name)
        {
            return .showError(OAuthError(.invalidRequest, "\(oversized.name) is too long"))
        }
        guard let clientID = parameters[OAuthParameter.clientID], !clientID.isEmpty else {
            return .showError(OAuthError(.invalidRequest, "client_id is missing"))
        }
        guard let client = try await clients.client(id: clientID) else {
            return .showError(OAuthError(.invalidClient, "unknown client_id"))
        }
        // OIDC Core §3.1.2.1: redirect_uri is required.
        guard let redirectURI = parameters[OAuthParameter.redirectURI], !redirectURI.isEmpty else {
            return .showError(OAuthError(.invalidRequest, "redirect_uri is missing"))
        }
        guard RedirectURI.matches(redirectURI, registered: client.redirectURIs) else {
            return .showError(OAuthError(.invalidRequest, "redirect_uri is not registered for this client"))
        }

        // From here errors go back to the client. A state that is itself unusable is not echoed.
        let state = parameters[OAuthParameter.state].flatMap { $0.utf8.count <= maxParameterLength ? $0 : nil }
        func fail(_ code: OAuthError.Code, _ description: String) -> AuthorizationRequestDecision {
            .redirectError(OAuthError(code, description), redirectURI: redirectURI, state: state)
        }
        // resource may be repeated (RFC 8707 §2); nothing else may.
        if let name = duplicated.subtracting([OAuthParameter.resource]).sorted().first {
            return fail(.invalidRequest, "\(name) must not be repeated")
        }
        if let oversized = parameters.pairs.first(where: { $0.value.utf8.count > maxParameterLength || $0.name.utf8.count > 128 }) {
            return fail(.invalidRequest, "\(oversized.name.prefix(64)) is too long")
        }
        if !pushed, requirePushedRequests || client.mustPushRequests {
            return fail(.invalidRequest, "this client must push its authorization requests to the PAR endpoint (RFC 9126)")
        }
        if !signed, client.requireSignedRequestObject {
            return fail(.invalidRequest, "this client must send its authorization requests as signed request objects (RFC 9101)")
        }
        if parameters[OAuthParameter.request] != nil { return fail(.invalidRequestObject, "a request object cannot be used here") }
        if parameters[OAuthParameter.requestURI] != nil { return fail(.requestURINotSupported, "request_uri is not supported") }

        guard let responseType = parameters[OAuthParameter.responseType], !responseType.isEmpty else {
            return fail(.invalidRequest, "response_type is missing")
        }
        guard responseType == "code" else { return fail(.unsupportedResponseType, "only response_type=code is supported") }
        if let mode = parameters[OAuthParameter.responseMode], mode != "query" {
            return fail(.invalidRequest, "only response_mode=query is supported")
        }

        // PKCE — RFC 7636 §4.4.1; S256 only, required of every client.
        guard let challenge = parameters[OAuthParameter.codeChallenge], !challenge.isEmpty else {
            return fail(.invalidRequest, "code_challenge is required (PKCE with S256)")
        }
        guard let method = parameters[OAuthParameter.codeChallengeMethod] else {
            return fail(.invalidRequest, "code_challenge_method is required and must be S256")
        }
        guard method == PKCE.method else { return fail(.invalidRequest, "code_challenge_method must be S256") }
        guard PKCE.isWellFormedChallenge(challenge) else {
            return fail(.invalidRequest, "code_challenge must be 43 characters of base64url (S256)")
        }

        let requestedScopes = (parameters[OAuthParameter.scope] ?? "").split(separator: " ").map(String.init)
        guard !requestedScopes.isEmpty else { return fail(.invalidScope, "scope is missing") }
        var scopes: [String] = []
        for scope in requestedScopes where !scopes.contains(scope) {
            // The OpenID scopes, or an API scope registered for this client (`clients add --scope`).
            guard Self.supportedScopes.contains(scope) || client.allowedScopes.contains(scope) else {
                return fail(.invalidScope, "unknown scope \(scope.prefix(64))")
            }
            guard client.allowedScopes.contains(scope) else { return fail(.invalidScope, "scope \(scope) is not allowed for this client") }
            scopes.append(scope)
        }

        let prompt = (parameters[OAuthParameter.prompt] ?? "").split(separator: " ").map(String.init)
        if let unknown = prompt.first(where: { !Self.supportedPrompts.contains($0) }) {
            return fail(.invalidRequest, "unsupported prompt value \(unknown.prefix(64))")
        }
        // OIDC Core §3.1.2.1: none must stand alone.
        if prompt.contains("none"), prompt.count > 1 { return fail(.invalidRequest, "prompt=none cannot be combined with other values") }

        var maxAge: Int?
        if let text = parameters[OAuthParameter.maxAge] {
            guard let value = Int(text), value >= 0, text.allSatisfy(\.isASCII) else {
                return fail(.invalidRequest, "max_age must be a non-negative integer")
            }
            maxAge = value
        }
        if let display = parameters[OAuthParameter.display], !["page", "touch", "popup", "wap"].contains(display) {
            return fail(.invalidRequest, "unsupported display value")
        }

        var request = ValidatedAuthorizationRequest(
            clientID: client.id,
            redirectURI: redirectURI,
            scope: scopes.joined(separator: " "),
            state: state,
            nonce: parameters[OAuthParameter.nonce],
            codeChallenge: challenge,
            prompt: prompt,
            maxAge: maxAge,
            loginHint: parameters[OAuthParameter.loginHint],
            acrValues: (parameters[OAuthParameter.acrValues] ?? "").split(separator: " ").map(String.init),
            uiLocales: (parameters[OAuthParameter.uiLocales] ?? "").split(separator: " ").map(String.init)
        )
        var claims: ClaimsRequest?
        if let text = parameters[OAuthParameter.claims] {
            switch ClaimsRequest.parse(text) {
            case .success(let parsed): claims = parsed
            case .failure(let refusal): return fail(.invalidRequest, refusal.description)
            }
        }
        // OIDC Core §5.5.1.1: an acr asked for as essential must be met, or the authentication
        // fails. Signet's levels are ordered (loa:2 meets loa:1, as with acr_values); values it
        // cannot give are no requirement it can meet.
        if let essential = claims?.essentialACR {
            let known = essential.filter { [AssuranceLevel.oneFactor, AssuranceLevel.twoFactors].contains($0) }
            guard !known.isEmpty else {
                return fail(
                    .accessDenied,
                    "claims asks for an essential acr this provider cannot give (it gives \(AssuranceLevel.oneFactor) and \(AssuranceLevel.twoFactors))"
                )
            }
            request.acrValues = known
        }
        // The client's own minimum holds whatever the (editable) request asks for.
        request.minimumACR = client.minimumACR
        // Singpass's native-app parameters.
        if let type = parameters[OAuthParameter.redirectURIHTTPSType] {
            guard type == "app_claimed_https" else { return fail(.invalidRequest, "redirect_uri_https_type must be app_claimed_https") }
            guard case .success(.claimedHTTPS) = RedirectURI.classify(redirectURI) else {
                return fail(.invalidRequest, "redirect_uri_https_type=app_claimed_https needs an https redirect_uri")
            }
            request.returnByLink = true
        }
        let resources = parameters.pairs.filter { $0.name == OAuthParameter.resource }.map(\.value)
        if !resources.isEmpty {
            if let refusal = Self.resourceRefusal(resources, client: client) { return fail(.invalidTarget, refusal) }
            request.resources = resources
        }
        if let jkt = parameters[OAuthParameter.dpopJKT] {
            guard jkt.utf8.count == 43, jkt.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                return fail(.invalidRequest, "dpop_jkt must be a base64url SHA-256 JWK thumbprint")
            }
            request.dpopJKT = jkt
        }
        switch try await instanceBinding(parameters, claims: claims, scopes: scopes, client: client) {
        case .success(let instanceID): request.instanceID = instanceID
        case .failure(let refusal): return fail(.invalidRequest, refusal.description)
        }
        if let launch = parameters[OAuthParameter.appLaunchURL] {
            guard let url = URLComponents(string: launch), url.scheme?.lowercased() == "https", url.host?.isEmpty == false, url.fragment == nil else {
                return fail(.invalidRequest, "app_launch_url must be an https URL without a fragment")
            }
            guard client.appLaunchURLs.contains(launch) else { return fail(.invalidRequest, "app_launch_url is not registered for this client") }
            request.appLaunchURL = launch
        }
        return .valid(request, client)
    }

    /// Why a request cannot be refused on its face for its device part.
    struct DeviceRefusal: Error, CustomStringConvertible { let description: String }

    /// The instance id a login with scope `device` activates (issue 8, MEPi's rule): the `nonce`,
    /// or the value of `instance_id` asked for in the `claims` parameter's `id_token` member (OIDC
    /// Core §5.5, read by ``ClaimsRequest``). It must be a live instance id issued to this client.
    /// `nil` without scope `device`.
    func instanceBinding(
        _ parameters: FormParameters, claims: ClaimsRequest?, scopes: [String], client: ClientRecord
    ) async throws -> Result<String?, DeviceRefusal> {
        // Only a string `value` names an instance; `null`, `essential` or `values` alone are
        // legal requests (OIDC Core §5.5.1) and leave the nonce to name it.
        let requested = claims?.instanceID?.value
        guard scopes.contains(DeviceInstances.scope) else { return .success(nil) }
        guard let instanceID = requested ?? parameters[OAuthParameter.nonce] else {
            return .failure(DeviceRefusal(description: "scope device needs the instance id as nonce or in claims (instance_id)"))
        }
        guard DeviceInstances.isWellFormed(instanceID), let devices, let instance = try await devices.deviceInstance(id: instanceID),
            instance.clientID == client.id, instance.expiresAt > now()
        else { return .failure(DeviceRefusal(description: "the instance id is unknown, expired or another client's")) }
        return .success(instanceID)
    }

    /// Why `resources` cannot be asked for by `client` (RFC 8707 §2: absolute URIs without a
    /// fragment, and here only those registered for the client), or `nil` when they can.
    static func resourceRefusal(_ resources: [String], client: ClientRecord) -> String? {
        for resource in resources {
            guard let url = URLComponents(string: resource), url.scheme != nil, url.fragment == nil else {
                return "resource must be an absolute URI without a fragment"
            }
            guard client.resources.contains(resource) else { return "resource \(resource.prefix(128)) is not registered for this client" }
        }
        return nil
    }
}
