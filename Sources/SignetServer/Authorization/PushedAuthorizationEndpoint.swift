// POST /par — Pushed Authorization Requests, RFC 9126.
import Foundation
import Hummingbird
import SignetCore

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
    let provider: Provider
    let authenticator: ClientAuthenticator
    let validator: AuthorizationRequestValidator
    let requestObjects: RequestObjectReader
    let dpop: DPoPProofVerifier

    /// The prefix of every request_uri — RFC 9126 §2.2.
    static let uriPrefix = "urn:ietf:params:oauth:request_uri:"

    func handle(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let parameters = try await RequestParameters.form(request, maxBodySize: provider.configuration.maxBodySize)
        if let duplicated = parameters.duplicatedNames.first {
            throw OAuthHTTPError.invalidRequest("\(duplicated.prefix(64)) must not be repeated")
        }
        // A DPoP proof here binds the code to its key (RFC 9449 §10.1), like dpop_jkt. Checked
        // first, so a request sent again with a server nonce has spent nothing (no assertion or
        // request-object jti).
        let proof: DPoPProof?
        do {
            proof = try await dpop.verify(request.headers[values: .dpop], method: "POST", url: provider.endpoint("/par"))
        } catch let refusal as DPoPProofVerifier.Refusal {
            throw refusal.oauthError
        }
        // Client authentication as at the token endpoint; an assertion may name the issuer, the
        // token endpoint or this endpoint as its audience (RFC 9126 §2).
        let client = try await authenticator.authenticate(
            request, parameters: parameters, audiences: [provider.issuer, provider.endpoint("/token"), provider.endpoint("/par")])
        // RFC 9126 §2.1: a pushed request must not itself point to another.
        if parameters[OAuthParameter.requestURI] != nil {
            throw OAuthHTTPError.invalidRequest("request_uri must not be sent to the pushed authorization request endpoint")
        }
        var pushed = FormParameters(
            parameters.pairs.filter { ![OAuthParameter.clientAssertion, OAuthParameter.clientAssertionType, OAuthParameter.clientSecret].contains($0.name) })
        if let named = pushed[OAuthParameter.clientID] {
            guard named == client.id else { throw OAuthHTTPError.invalidRequest("client_id is not the authenticated client") }
        } else {
            pushed.append(OAuthParameter.clientID, client.id)
        }
        // A signed request object (RFC 9101) replaces the parameters beside it.
        let signed: Bool
        switch try await requestObjects.read(pushed) {
        case .refused(let error): throw OAuthHTTPError(error.error == .invalidClient ? .unauthorized : .badRequest, error)
        case .parameters(let read, let wasSigned): (pushed, signed) = (read, wasSigned)
        }
        guard pushed[OAuthParameter.clientID] == client.id else { throw OAuthHTTPError.invalidRequest("client_id is not the authenticated client") }
        if let proof {
            if let named = pushed[OAuthParameter.dpopJKT], named != proof.jkt {
                throw OAuthHTTPError(.badRequest, .invalidDPoPProof, "dpop_jkt is not the key of the DPoP proof")
            }
            if pushed[OAuthParameter.dpopJKT] == nil { pushed.append(OAuthParameter.dpopJKT, proof.jkt) }
        }
        switch try await validator.validate(pushed, pushed: true, signed: signed) {
        case .showError(let error), .redirectError(let error, _, _):
            throw OAuthHTTPError(error.error == .invalidClient ? .unauthorized : .badRequest, error)
        case .valid:
            break
        }
        let handle = provider.random.token()
        let lifetime = min(provider.configuration.pushedRequestLifetime, 60)
        try await provider.store.insertPushedRequest(
            PushedRequestRecord(
                uriHash: SecretDigest.hex(handle), clientID: client.id, parameters: pushed.pairs.map { [$0.name, $0.value] }, signed: signed,
                expiresAt: provider.now().addingTimeInterval(lifetime)))
        return JSONResponse.make(PushedAuthorizationResponse(requestURI: Self.uriPrefix + handle, expiresIn: Int(lifetime)), status: .created)
    }

    /// The parameters `/authorize` goes on with, or why a `request_uri` cannot be used.
    enum Resolution {
        /// `pushed`: they came from `/par`; `signed`: from a verified request object.
        case parameters(FormParameters, pushed: Bool, signed: Bool)
        case refused(OAuthError)
    }

    /// The pushed parameters a request to `/authorize` names, consumed (RFC 9126 §4): the
    /// request carries only `client_id` and `request_uri`, the uri is live and unused, and it
    /// was pushed by that client. A `request_uri` that is not one of ours (an OIDC request by
    /// reference) is left to the validator, which refuses it as `request_uri_not_supported`.
    func resolve(_ parameters: FormParameters) async throws -> Resolution {
        guard let uri = parameters[OAuthParameter.requestURI], uri.hasPrefix(Self.uriPrefix) else { return .parameters(parameters, pushed: false, signed: false) }
        if let other = parameters.pairs.first(where: { $0.name != OAuthParameter.requestURI && $0.name != OAuthParameter.clientID }) {
            return .refused(OAuthError(.invalidRequest, "with request_uri, only client_id may be sent (\(other.name.prefix(64)) was)"))
        }
        guard !parameters.duplicatedNames.contains(where: { $0 == OAuthParameter.requestURI || $0 == OAuthParameter.clientID }) else {
            return .refused(OAuthError(.invalidRequest, "client_id and request_uri must appear once"))
        }
        guard let clientID = parameters[OAuthParameter.clientID], !clientID.isEmpty else {
            return .refused(OAuthError(.invalidRequest, "client_id is missing"))
        }
        guard uri.utf8.count <= 128 else { return .refused(OAuthError(.invalidRequestURI, "request_uri was not issued by this provider")) }
        let handle = String(uri.dropFirst(Self.uriPrefix.count))
        guard let record = try await provider.store.consumePushedRequest(uriHash: SecretDigest.hex(handle)) else {
            return .refused(OAuthError(.invalidRequestURI, "request_uri is unknown, expired or already used"))
        }
        guard record.clientID == clientID else { return .refused(OAuthError(.invalidRequestURI, "request_uri was pushed by another client")) }
        guard record.expiresAt > provider.now() else { return .refused(OAuthError(.invalidRequestURI, "request_uri has expired")) }
        return .parameters(FormParameters(record.parameters.compactMap { $0.count == 2 ? (name: $0[0], value: $0[1]) : nil }), pushed: true, signed: record.signed ?? false)
    }
}
