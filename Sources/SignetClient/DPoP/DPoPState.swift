// The SDK's DPoP: the key store and the servers' nonces; proofs are made by SignetCore's DPoPTransport.
import Foundation
import SignetCore

/// What a client with a DPoP key store keeps between requests: the key store and the latest
/// `DPoP-Nonce` of each server (``SignetCore/DPoPNonces``), shared by copies of the client.
final class DPoPState: Sendable {
    let store: any DPoPKeyStore
    let random: SecureRandom
    let nonces = DPoPNonces()

    init(store: any DPoPKeyStore, random: SecureRandom) {
        self.store = store
        self.random = random
    }

    /// The key, with key-store failures as ``SignetClientError/Code/keyUnavailable``.
    func key() async throws -> any DPoPSigningKey {
        do { return try await store.key() } catch let error as SignetClientError { throw error } catch {
            throw SignetClientError(.keyUnavailable, isRetryable: false, underlying: error)
        }
    }

    /// `base` with a proof of the key on every request and the nonce retry (RFC 9449 §8, §9).
    func transport(over base: any HTTPTransport, now: @escaping @Sendable () -> Date) -> DPoPTransport {
        DPoPTransport(base: base, key: { [self] in try await key() }, nonces: nonces, random: random, now: now)
    }
}
