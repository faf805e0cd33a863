// Client authentication at the token and revocation endpoints (RFC 6749 §2.3, RFC 7523 §2.2, OIDC Core §9).
import Foundation
import Hummingbird
import JWTKit
import SignetCore
import SignetJOSE
import SignetStore

/// Decides which client is calling, by the one method it used.
struct ClientAuthenticator: Sendable {
    let server: ServerContext
    let clients: any ClientStore
    /// Where each assertion's `jti` is recorded, so it is used once.
    let replays: any ReplayStore
    /// Checks assertions' signatures with the client's keys (made once each).
    let jwtVerifier: ClientJWTVerifier
    /// The clock skew allowed on `iat`, `nbf` and `exp`.
    let clockSkew: TimeInterval
    /// The longest an assertion may live, from now to its `exp`.
    let maxClientAssertionLifetime: TimeInterval

    /// The authenticated client; throws ``OAuthHTTPError`` (401 invalid_client, 400 invalid_request).
    ///
    /// - Parameter endpoints: endpoint URLs a client assertion's `aud` may name besides the
    ///   issuer, exactly and as a single string (RFC 7523 §3, RFC 7523bis); a FAPI 2.0 client's
    ///   must name the issuer (``FAPI2Profile/assertionAudiences(for:issuer:endpoints:)``).
    func authenticate(_ request: Request, parameters: FormParameters, endpoints: [String]) async throws -> ClientRecord {
        let basic = request.headers[.authorization].flatMap { header -> String? in
            header.lowercased().hasPrefix("basic ") ? String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces) : nil
        }
        let assertion = parameters[OAuthParameter.clientAssertion]
        let postedSecret = parameters[OAuthParameter.clientSecret]
        let methodsUsed = [basic != nil, assertion != nil, postedSecret != nil].filter { $0 }.count
        guard methodsUsed <= 1 else { throw OAuthHTTPError.invalidRequest("use exactly one client authentication method") }

        if let basic { return try await authenticateBasic(basic, parameters: parameters) }
        if let assertion { return try await authenticateAssertion(assertion, parameters: parameters, endpoints: endpoints) }
        guard let clientID = parameters[OAuthParameter.clientID], !clientID.isEmpty else {
            throw Self.invalidClient("client authentication is missing")
        }
        guard let client = try await clients.client(id: clientID) else { throw Self.invalidClient("client authentication failed") }
        if let postedSecret {
            guard client.authMethod == .clientSecretPost, Self.secretMatches(postedSecret, client: client) else {
                throw Self.invalidClient("client authentication failed")
            }
            return client
        }
        guard client.authMethod == .none else { throw Self.invalidClient("this client must authenticate with \(client.authMethod.rawValue)") }
        return client
    }

    // client_secret_basic — RFC 6749 §2.3.1: id and secret are form-encoded, then base64.
    private func authenticateBasic(_ credentials: String, parameters: FormParameters) async throws -> ClientRecord {
        guard let data = Data(base64Encoded: credentials), let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":"),
            let clientID = String(text[..<colon]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
            let secret = String(text[text.index(after: colon)...]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
            !clientID.utf8.contains(0)
        else { throw Self.invalidClient("malformed Basic credentials", basic: true) }
        if let bodyID = parameters[OAuthParameter.clientID], bodyID != clientID {
            throw Self.invalidClient("client_id does not match the Basic credentials", basic: true)
        }
        guard let client = try await clients.client(id: clientID), client.authMethod == .clientSecretBasic,
            Self.secretMatches(secret, client: client)
        else { throw Self.invalidClient("client authentication failed", basic: true) }
        return client
    }

    // private_key_jwt — RFC 7523 §3, OIDC Core §9.
    private func authenticateAssertion(_ assertion: String, parameters: FormParameters, endpoints: [String]) async throws -> ClientRecord {
        guard parameters[OAuthParameter.clientAssertionType] == OAuthParameter.jwtBearerAssertionType else {
            throw OAuthHTTPError.invalidRequest("client_assertion_type must be \(OAuthParameter.jwtBearerAssertionType)")
        }
        // One structural check for every incoming JWT: shape, JSON objects, no repeated names.
        let jwt: CompactJWT
        switch CompactJWT.parse(assertion) {
        case .success(let parsed): jwt = parsed
        case .failure(let refusal): throw Self.invalidClient("client_assertion is refused: \(refusal)")
        }
        // Not another kind of JWT signed with the same key (a request object, a DPoP proof, a token).
        if let typ = jwt.header.typ, !["JWT", "client-authentication+jwt"].contains(typ) {
            throw Self.invalidClient("client_assertion typ \(typ.prefix(32)) is not a client assertion's")
        }
        guard JOSEHeader.acceptedAlgorithms.contains(jwt.header.alg) else {
            throw Self.invalidClient("client_assertion alg \(jwt.header.alg.prefix(16)) is not accepted")
        }
        // Find the client from the unverified claims, then verify with that client's keys.
        let unverified: ClientAssertionClaims
        do {
            unverified = try ClientAssertionClaims.decode(jwt.claimMembers, fallback: JSONDecoder())
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.map(\.stringValue) == ["aud"] {
            throw Self.invalidClient("client_assertion aud must be a single string, the issuer or the token endpoint URL, not an array")
        } catch {
            throw Self.invalidClient("client_assertion claims are malformed")
        }
        guard let client = try await clients.client(id: unverified.iss), client.authMethod == .privateKeyJWT else {
            throw Self.invalidClient("client authentication failed")
        }
        if let bodyID = parameters[OAuthParameter.clientID], bodyID != client.id {
            throw Self.invalidClient("client_id does not match the assertion")
        }
        do {
            try await jwtVerifier.verify(assertion, jwt, client: client, what: "client_assertion")
        } catch let refusal as ClientJWTVerifier.Refusal {
            throw Self.invalidClient(refusal.description)
        }
        let claims = unverified

        let now = server.now()
        let nowSeconds = Int(now.timeIntervalSince1970)
        let skew = Int(clockSkew)
        guard claims.iss == client.id, claims.sub == client.id else { throw Self.invalidClient("iss and sub must both be the client_id") }
        guard FAPI2Profile.assertionAudiences(for: client, issuer: server.issuer, endpoints: endpoints).contains(claims.aud) else {
            throw Self.invalidClient(
                client.fapi2
                    ? "client_assertion aud must be the issuer (FAPI 2.0)" : "client_assertion aud must be the issuer or the token endpoint URL")
        }
        // Compared without adding to the claim, so absurd values cannot overflow.
        guard claims.exp > nowSeconds - skew else { throw Self.invalidClient("client_assertion has expired") }
        guard claims.exp <= nowSeconds + Int(maxClientAssertionLifetime) + skew else {
            throw Self.invalidClient("client_assertion exp is too far in the future (at most 5 minutes)")
        }
        if let iat = claims.iat, iat > nowSeconds + skew { throw Self.invalidClient("client_assertion iat is in the future") }
        if let nbf = claims.nbf, nbf > nowSeconds + skew { throw Self.invalidClient("client_assertion is not yet valid") }
        guard !claims.jti.isEmpty, claims.jti.utf8.count <= 256 else { throw Self.invalidClient("client_assertion jti is missing") }
        let firstUse = try await replays.recordOnce(
            key: "assertion:\(client.id):\(claims.jti)", expiresAt: Date(timeIntervalSince1970: Double(claims.exp) + Double(skew)), now: now)
        guard firstUse else { throw Self.invalidClient("client_assertion jti was already used") }
        return client
    }

    static func secretMatches(_ secret: String, client: ClientRecord) -> Bool {
        guard let stored = client.secretHash, secret.utf8.count <= 512 else { return false }
        return ConstantTime.equals(SecretDigest.hex(secret), stored)
    }

    /// 401 invalid_client; with `WWW-Authenticate` when the client tried HTTP Basic (RFC 6749 §5.2).
    static func invalidClient(_ description: String, basic: Bool = false) -> OAuthHTTPError {
        var headers: HTTPFields = [:]
        if basic { headers[.wwwAuthenticate] = #"Basic realm="signet", error="invalid_client""# }
        return OAuthHTTPError(.unauthorized, .invalidClient, description, headers: headers)
    }
}
