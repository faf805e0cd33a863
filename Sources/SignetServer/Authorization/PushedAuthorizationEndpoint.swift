// POST /par — Pushed Authorization Requests, RFC 9126.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// The answer to a pushed request — RFC 9126 §2.2.
struct PushedAuthorizationResponse: Encodable {
    /// request_uri — `urn:ietf:params:oauth:request_uri:<random>`, used once.
    let requestURI: String
    /// expires_in — seconds the request_uri may be used.
    let expiresIn: Int

    enum CodingKeys: String, CodingKey {
        case requestURI = "request_uri"
        case expiresIn = "expires_in"
    }
}

/// Takes an authorization request from an authenticated client over a back channel, checks it
/// with the one ``AuthorizationRequestValidator``, and answers a short-lived single-use
/// `request_uri` the browser then carries to `/authorize` instead of the editable parameters.
struct PushedAuthorizationEndpoint: Sendable {
    let server: ServerContext
    let pushedRequests: any PushedRequestStore
    let pushedRequestLifetime: TimeInterval
    let maxBodySize: Int
    let authenticator: ClientAuthenticator
    let dpop: DPoPProofVerifier
    /// Reads what is pushed as ``AuthorizeEndpoint`` reads what it is sent.
    let requests: AuthorizationRequestReader

    func handle(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let parameters = try await RequestParameters.form(request, maxBodySize: maxBodySize)
        if let duplicated = parameters.duplicatedNames.first {
            throw OAuthHTTPError.invalidRequest("\(duplicated.prefix(64)) must not be repeated")
        }
        // A DPoP proof here binds the code to its key (RFC 9449 §10.1), like dpop_jkt. Checked
        // first, so a request sent again with a server nonce has spent nothing (no assertion or
        // request-object jti).
        let proof = try await dpop.proof(of: request, at: server.endpoint("/par"))
        // Client authentication as at the token endpoint; an assertion may name the issuer, the
        // token endpoint or this endpoint as its audience (RFC 9126 §2).
        let client = try await authenticator.authenticate(
            request, parameters: parameters, endpoints: [server.endpoint("/token"), server.endpoint("/par")])
        // Optional here (it only binds the code); when sent, held to the client's algorithms.
        try FAPI2Profile.checkProof(proof, client: client, required: false)
        // RFC 9126 §2.1: a pushed request must not itself point to another.
        if parameters[OAuthParameter.requestURI] != nil {
            throw OAuthHTTPError.invalidRequest("request_uri must not be sent to the pushed authorization request endpoint")
        }
        var pushed = FormParameters(
            parameters.pairs.filter {
                ![OAuthParameter.clientAssertion, OAuthParameter.clientAssertionType, OAuthParameter.clientSecret].contains($0.name)
            })
        if let named = pushed[OAuthParameter.clientID] {
            guard named == client.id else { throw OAuthHTTPError.invalidRequest("client_id is not the authenticated client") }
        } else {
            pushed.append(OAuthParameter.clientID, client.id)
        }
        // Read as /authorize reads requests: a signed request object (RFC 9101) replaces the
        // parameters beside it, the one validator checks them, id_token_hint is verified.
        let read = try await requests.read(pushed, from: .pushed)
        switch read.decision {
        case .showError(let error), .redirectError(let error, _, _):
            throw OAuthHTTPError(error.error == .invalidClient ? .unauthorized : .badRequest, error)
        case .valid(let request, _):
            guard request.clientID == client.id else { throw OAuthHTTPError.invalidRequest("client_id is not the authenticated client") }
        }
        pushed = read.parameters
        if let proof {
            if let named = pushed[OAuthParameter.dpopJKT], named != proof.jkt {
                throw OAuthHTTPError(.badRequest, .invalidDPoPProof, "dpop_jkt is not the key of the DPoP proof")
            }
            // Validated again at /authorize, with the rest of the stored parameters.
            if pushed[OAuthParameter.dpopJKT] == nil { pushed.append(OAuthParameter.dpopJKT, proof.jkt) }
        }
        let handle = server.random.token()
        let lifetime = min(pushedRequestLifetime, 60)
        try await pushedRequests.insertPushedRequest(
            PushedRequestRecord(
                uriHash: SecretDigest.hex(handle), clientID: client.id, parameters: pushed.pairs.map { [$0.name, $0.value] }, signed: read.signed,
                expiresAt: server.now().addingTimeInterval(lifetime)))
        return JSONResponse.make(
            PushedAuthorizationResponse(requestURI: PushedRequests.uriPrefix + handle, expiresIn: Int(lifetime)), status: .created)
    }
}
