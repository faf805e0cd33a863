// Client authentication at the token and revocation endpoints (RFC 6749 §2.3, RFC 7523, OIDC Core §9).
import Crypto
import Foundation
import JWTKit
import SignetCore
import SignetJOSE

extension RelyingParty {
    /// POSTs `parameters` form-encoded to `endpoint` with this client's authentication added.
    ///
    /// - Parameters:
    ///   - endpoint: the URL, already checked by ``checkedEndpoint(_:name:)``.
    ///   - proveKey: send a DPoP proof of the configured key, when there is one (token and PAR requests).
    func postForm(_ parameters: FormParameters, to endpoint: String, proveKey: Bool = false) async throws -> HTTPTransportResponse {
        // A provider that wants a server nonce says so once; the request is then made anew (fresh assertion and proof).
        try await send(proveKey: proveKey) { try await formRequest(parameters, to: endpoint) }
    }

    /// The POST of `parameters` to `endpoint` with this client's authentication (a fresh assertion each time).
    private func formRequest(_ parameters: FormParameters, to endpoint: String) async throws -> HTTPTransportRequest {
        var parameters = parameters
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json"),
        ]
        let clientID = configuration.clientID
        switch configuration.clientAuthentication {
        case .privateKeyJWT(let privateKey, let keyID):
            parameters.append(OAuthParameter.clientID, clientID)
            parameters.append(OAuthParameter.clientAssertionType, OAuthParameter.jwtBearerAssertionType)
            parameters.append(
                OAuthParameter.clientAssertion,
                try await makeClientAssertion(privateKey: privateKey, keyID: keyID))
        case .clientSecretBasic(let secret):
            headers.append(("Authorization", Self.basicAuthorization(clientID: clientID, secret: secret)))
        case .clientSecretPost(let secret):
            parameters.append(OAuthParameter.clientID, clientID)
            parameters.append(OAuthParameter.clientSecret, secret)
        case .none:
            parameters.append(OAuthParameter.clientID, clientID)
        }
        return HTTPTransportRequest(method: "POST", url: endpoint, headers: headers, body: Data(parameters.encoded.utf8))
    }

    /// The `Authorization` header value of client_secret_basic — RFC 6749 §2.3.1.
    ///
    /// The client id and secret are each form-url-encoded before they are joined with `:`
    /// and base64-encoded, so a `:` or non-ASCII character in either survives the trip.
    public static func basicAuthorization(clientID: String, secret: String) -> String {
        let credentials = FormParameters.encode(clientID) + ":" + FormParameters.encode(secret)
        return "Basic " + Data(credentials.utf8).base64EncodedString()
    }

    /// A client assertion for private_key_jwt — RFC 7523 §3, OIDC Core §9.
    ///
    /// `iss` and `sub` are the client_id; `aud` is the provider's issuer identifier as a single
    /// string, the same for every endpoint (RFC 7523bis: an endpoint URL or an array lets a
    /// provider that lies in its metadata collect assertions another provider accepts); `exp`
    /// is one minute ahead, and `jti` a fresh random value so the provider can refuse replays.
    /// Signed ES256 with header `kid` naming the registered key and `typ: JWT`.
    func makeClientAssertion(privateKey: P256.Signing.PrivateKey, keyID: String) async throws -> String {
        let issuedAt = nowSeconds
        let claims = ClientAssertionClaims(
            iss: configuration.clientID, sub: configuration.clientID, aud: configuration.issuer,
            exp: issuedAt + 60, iat: issuedAt, jti: random.token())
        return try await Self.signES256(claims, privateKey: privateKey, keyID: keyID, typ: "JWT", what: "the client assertion")
    }

    /// `claims` signed ES256 with the client's key, header `kid` and `typ` — the one signing path
    /// of client assertions and request objects.
    static func signES256(_ claims: some JWTPayload, privateKey: P256.Signing.PrivateKey, keyID: String, typ: String, what: String) async throws
        -> String
    {
        let kid = JWKIdentifier(string: keyID)
        do {
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: try ES256PrivateKey(backing: privateKey), kid: kid)
            var header = JWTHeader()
            header.alg = "ES256"
            header.typ = typ
            return try await keys.sign(claims, kid: kid, header: header)
        } catch {
            throw SignetError(.keyFailure, "\(what) could not be signed")
        }
    }
}
