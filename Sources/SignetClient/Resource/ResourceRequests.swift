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
    func send(_ request: HTTPTransportRequest, accessToken: String, tokenType: String, via transport: any HTTPTransport) async throws
        -> HTTPTransportResponse
    {
        let bound = tokenType.caseInsensitiveCompare("DPoP") == .orderedSame
        guard !bound || dpop != nil else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "a DPoP-bound token needs the client's DPoP key store")
        }
        var outgoing = request
        outgoing.headers.removeAll { ["authorization", "dpop"].contains($0.name.lowercased()) }
        guard bound, let dpop else {
            outgoing.headers.append(("Authorization", "Bearer " + accessToken))
            return try await send(outgoing, via: transport)
        }
        outgoing.headers.append(("Authorization", "DPoP " + accessToken))
        return try await send(outgoing, via: dpop.transport(over: transport, now: now))
    }
}
