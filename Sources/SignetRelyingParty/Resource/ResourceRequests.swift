// Calling an API with an access token — RFC 6750 §2.1, RFC 9449 §7.
import Foundation
import SignetCore

extension RelyingParty {
    /// Sends `request` to an API with `accessToken`: the Bearer scheme, or, with a DPoP key
    /// configured, the DPoP scheme and a proof naming this method, URL and token (`ath`).
    ///
    /// When the API answers 401 with `use_dpop_nonce` and a `DPoP-Nonce` (RFC 9449 §9), the
    /// request is sent once more with a fresh proof carrying that nonce. Nonces are kept per
    /// origin, apart from the provider's. The answer is returned as it is, whatever its status.
    ///
    /// - Throws: transport failures only.
    public func send(_ request: HTTPTransportRequest, accessToken: String) async throws -> HTTPTransportResponse {
        func authorized() async throws -> HTTPTransportRequest {
            var headers = request.headers.filter { !["authorization", "dpop"].contains($0.0.lowercased()) }
            if let proof = try await dpopProof(method: request.method, url: request.url, accessToken: accessToken) {
                headers += [("Authorization", "DPoP " + accessToken), ("DPoP", proof)]
            } else {
                headers.append(("Authorization", "Bearer " + accessToken))
            }
            return HTTPTransportRequest(method: request.method, url: request.url, headers: headers, body: request.body)
        }
        let response = try await send(try await authorized())
        guard asksForDPoPNonce(response, from: request.url) else { return response }
        return try await send(try await authorized())
    }
}
