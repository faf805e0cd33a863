// The backend's DPoP (RFC 9449): proofs and nonces through SignetCore's DPoPTransport.
import Foundation
import SignetCore

extension RelyingParty {
    /// `transport` with a proof of the configured DPoP key on every request and the nonce retry
    /// (RFC 9449 §8, §9); `nil` without a DPoP key. Made by SignetCore's ``DPoPTransport``, the
    /// same middleware the app SDK sends through; each proof's `iat` is this party's clock.
    var dpopTransport: DPoPTransport? {
        guard let key = configuration.dpopKey else { return nil }
        let signing = SoftwareDPoPKey(privateKey: key)
        return DPoPTransport(
            base: transport, key: { signing }, nonces: dpopNonces, random: random,
            now: { [now] in Date(timeIntervalSince1970: now().timeIntervalSince1970.rounded(.down)) })
    }

    /// Sends the request `make` builds: through ``dpopTransport`` when `proveKey` and a DPoP key is
    /// configured (built anew when the server asks for its nonce), else as it is.
    func send(proveKey: Bool, building make: () async throws -> HTTPTransportRequest) async throws -> HTTPTransportResponse {
        guard proveKey, let dpop = dpopTransport else { return try await send(try await make()) }
        do { return try await dpop.send(building: make) } catch let failure as DPoPTransport.ProofFailure {
            throw failure.underlying
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.transportFailure, "the request failed: \(String(describing: type(of: error)).prefix(80))")
        }
    }
}
