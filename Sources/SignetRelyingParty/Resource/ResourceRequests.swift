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
        var outgoing = request
        outgoing.headers.removeAll { ["authorization", "dpop"].contains($0.name.lowercased()) }
        outgoing.headers.append(("Authorization", (configuration.dpopKey == nil ? "Bearer " : "DPoP ") + accessToken))
        return try await send(proveKey: true) { outgoing }
    }
}
