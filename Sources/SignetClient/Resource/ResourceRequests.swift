// Calling a resource (API) with the access token — RFC 6750 §2.1, RFC 9449 §7.
import Foundation
import SignetCore

extension SignetClient {
    /// Sends `request` to a resource with the access token of `tokens`.
    ///
    /// A DPoP-bound token (token_type `DPoP`) goes with `Authorization: DPoP <token>` and a fresh
    /// proof naming the request and the token (`ath`, RFC 9449 §7.1); a bearer token with
    /// `Authorization: Bearer <token>` (RFC 6750 §2.1). When the resource answers 401 with a DPoP
    /// challenge `error="use_dpop_nonce"` and a `DPoP-Nonce` (§9), the request is sent once more
    /// with a proof carrying that nonce. Any answer is returned, whatever its status.
    ///
    /// - Throws: `misuse` for a DPoP-bound token when the client has no DPoP key store.
    public func send(_ request: HTTPTransportRequest, authorizedWith tokens: AuthTokens) async throws -> HTTPTransportResponse {
        try await send(request, accessToken: tokens.accessToken, tokenType: tokens.tokens.tokenType)
    }

    /// Sends `request` to a resource with `accessToken` of `tokenType` (`Bearer` or `DPoP`); see
    /// ``send(_:authorizedWith:)``.
    public func send(_ request: HTTPTransportRequest, accessToken: String, tokenType: String) async throws -> HTTPTransportResponse {
        try await send(request, accessToken: accessToken, tokenType: tokenType, via: transport)
    }

    /// ``send(_:accessToken:tokenType:)`` through `transport` (a mutual-TLS one for the device endpoints).
    func send(_ request: HTTPTransportRequest, accessToken: String, tokenType: String, via transport: any HTTPTransport) async throws -> HTTPTransportResponse {
        let bound = tokenType.caseInsensitiveCompare("DPoP") == .orderedSame
        guard !bound || dpop != nil else { throw SignetClientError(.misuse, isRetryable: false, reason: "a DPoP-bound token needs the client's DPoP key store") }
        func attempt() async throws -> HTTPTransportResponse {
            var outgoing = request
            outgoing.headers.removeAll { ["authorization", "dpop"].contains($0.name.lowercased()) }
            if bound, let dpop {
                outgoing.headers.append(("Authorization", "DPoP " + accessToken))
                outgoing.headers.append(("DPoP", try await dpop.proof(method: request.method, url: request.url, now: now(), accessToken: accessToken)))
            } else {
                outgoing.headers.append(("Authorization", "Bearer " + accessToken))
            }
            return try await send(outgoing, via: transport)
        }
        let response = try await attempt()
        if bound, let dpop, dpop.asksForNonce(response, from: request.url) { return try await attempt() }
        return response
    }
}
