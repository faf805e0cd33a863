// Reading and checking the access token a request to one of the provider's own resources
// carries (UserInfo, device activation) — RFC 6750 §2, RFC 9449 §7.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// The provider's own resource-server check: token signature, expiry and revocation through
/// ``OwnTokenVerifier``, the scheme against the token's binding, the DPoP proof, and for a
/// certificate-bound token (RFC 8705 §3) the device certificate of the request.
struct OwnResourceAccess: Sendable {
    let server: ServerContext
    let clients: any ClientStore
    let ownTokens: OwnTokenVerifier
    let maxBodySize: Int
    let dpop: DPoPProofVerifier
    let devices: DeviceIdentification

    /// The verified access token `request` carries to the resource at `path`: Bearer, or the DPoP
    /// scheme with a proof of the bound key (RFC 9449 §7); for `/userinfo` also in a form body
    /// (RFC 6750 §2.2) when `formBody` is true. Refusals are thrown as RFC 6750 §3 challenges.
    func verify(_ request: Request, context: SignetRequestContext, path: String, formBody: Bool) async throws -> OwnTokenVerifier.VerifiedOwnToken {
        var token: String?
        var usedDPoPScheme = false
        switch AuthorizationCredentials.read(request.headers[values: .authorization]) {
        case .none: break
        case .token(let presented, let scheme): (token, usedDPoPScheme) = (presented, scheme == .dpop)
        case .refused(.tooLarge): throw Self.challenge(.invalidToken, AuthorizationCredentials.Problem.tooLarge.description, status: .unauthorized)
        case .refused(let problem): throw Self.challenge(.invalidRequest, problem.description, status: .badRequest)
        }
        if formBody, request.method == .post, request.headers[.contentType] != nil {
            // RFC 6750 §2.2: the token may come in a form body instead.
            let parameters = try await RequestParameters.form(request, maxBodySize: maxBodySize)
            if let duplicated = parameters.duplicatedNames.first {
                throw Self.challenge(.invalidRequest, "\(duplicated.prefix(64)) must not be repeated", status: .badRequest)
            }
            if let bodyToken = parameters["access_token"] {
                guard token == nil else { throw Self.challenge(.invalidRequest, "send the token one way only", status: .badRequest) }
                token = bodyToken
            }
        }
        guard let token else {
            // RFC 6750 §3.1: a request with no credentials gets a challenge without an error code;
            // the JSON body still says what is missing, as every error of this endpoint does.
            throw OAuthHTTPError(
                .unauthorized, .invalidRequest, "an access token is required (Authorization: Bearer)",
                headers: [.wwwAuthenticate: Self.bareChallenge])
        }
        guard let verified = try await ownTokens.accessToken(token) else {
            throw Self.challenge(.invalidToken, "the access token is invalid, expired or revoked", status: .unauthorized, dpop: usedDPoPScheme)
        }
        let claims = verified.claims
        // RFC 8705 §3 and RFC 9449 §7, as the kit's AccessTokenVerifier judges them (TokenBinding).
        let binding = TokenBinding(claims.cnf)
        var certificate: String?
        if binding.certificateThumbprint != nil, case .device(let device) = try await devices.identify(request, context: context) {
            certificate = device.thumbprint  // a device not revoked
        }
        switch binding.refusal(scheme: usedDPoPScheme ? .dpop : .bearer, certificate: certificate) {
        case .certificateRequired?, .certificateMismatch?:
            throw Self.challenge(
                .invalidToken, "this access token is bound to a device certificate: present that certificate, of a device not revoked",
                status: .unauthorized, dpop: usedDPoPScheme)
        case .boundTokenAsBearer?:
            throw Self.challenge(
                .invalidToken, "this access token is DPoP-bound: send it with the DPoP scheme and a proof", status: .unauthorized, dpop: true)
        case .unboundTokenAsDPoP?:
            throw Self.challenge(.invalidToken, "this access token is not DPoP-bound: use the Bearer scheme", status: .unauthorized, dpop: true)
        case nil: break
        }
        if binding.needsProof {
            let proof: DPoPProof?
            do {
                proof = try await dpop.verify(
                    request.headers[values: .dpop], method: request.method.rawValue, url: server.endpoint(path), accessToken: token)
            } catch let refusal as DPoPProofVerifier.Refusal {
                let error = Self.challenge(
                    refusal.nonce == nil ? .invalidDPoPProof : .useDPoPNonce, refusal.description, status: .unauthorized, dpop: true)
                guard let nonce = refusal.nonce else { throw error }
                var headers = error.headers
                headers[.dpopNonce] = nonce
                throw OAuthHTTPError(error.status, error.error, headers: headers)
            }
            guard let proof, binding.proofMatches(proof.jkt) else {
                throw Self.challenge(
                    .invalidToken, "the DPoP proof is missing or made with another key than the token's", status: .unauthorized, dpop: true)
            }
            // FAPI 2.0 §5.4 holds for every proof of a FAPI 2.0 client (the client is read only then).
            if !FAPI2Profile.algorithms.contains(proof.alg), let client = try await clients.client(id: claims.clientID), client.fapi2 {
                throw Self.challenge(
                    .invalidDPoPProof, "this client's DPoP proofs must use PS256, ES256 or EdDSA (FAPI 2.0)", status: .unauthorized, dpop: true)
            }
        }
        return verified
    }

    /// RFC 9470 §3: the login behind the token is too old (or too weak) for this request.
    static func stepUpChallenge(_ description: String, maxAge: Int? = nil, acrValues: String? = nil) -> OAuthHTTPError {
        let error = OAuthError(.insufficientUserAuthentication, description)
        var attributes = [("realm", "signet"), ("error", error.error.rawValue), ("error_description", error.errorDescription ?? "")]
        if let maxAge { attributes.append(("max_age", String(maxAge))) }
        if let acrValues { attributes.append(("acr_values", acrValues)) }
        return OAuthHTTPError(
            .unauthorized, error, headers: [.wwwAuthenticate: AuthenticationChallenge(scheme: "Bearer", attributes: attributes).headerValue])
    }

    /// The challenge to a request without credentials: no error code (RFC 6750 §3.1).
    static let bareChallenge = #"Bearer realm="signet""#

    /// An error with the `WWW-Authenticate` challenge of RFC 6750 §3 (Bearer) or RFC 9449 §7.1
    /// (DPoP), written by ``SignetCore/AuthenticationChallenge`` as the kit's verifier writes it.
    static func challenge(_ code: OAuthError.Code, _ description: String, status: HTTPResponse.Status, dpop: Bool = false) -> OAuthHTTPError {
        let error = OAuthError(code, description)
        let first = dpop ? ("algs", JOSEHeader.acceptedAlgorithms.sorted().joined(separator: " ")) : ("realm", "signet")
        let challenge = AuthenticationChallenge(
            scheme: dpop ? "DPoP" : "Bearer",
            attributes: [first, ("error", error.error.rawValue), ("error_description", error.errorDescription ?? "")])
        return OAuthHTTPError(status, error, headers: [.wwwAuthenticate: challenge.headerValue])
    }
}
