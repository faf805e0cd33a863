// The SDK's DPoP plumbing: the key store, the servers' nonces, and proofs for each request.
import Foundation
import SignetCore
import Synchronization

/// What a client with a DPoP key store keeps between requests: the latest `DPoP-Nonce` of each
/// server (RFC 9449 §8 for the provider, §9 for resources), keyed by origin, since each server
/// hands out its own.
final class DPoPState: Sendable {
    let store: any DPoPKeyStore
    let random: SecureRandom
    private let nonces = Mutex<[String: String]>([:])

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

    /// A proof for one request, carrying the nonce last seen from `url`'s server.
    func proof(method: String, url: String, now: Date, accessToken: String? = nil) async throws -> String {
        let maker = DPoPProofMaker(key: try await key(), random: random)
        do {
            return try await maker.proof(method: method, url: url, issuedAt: now, accessToken: accessToken, nonce: nonce(for: url))
        } catch {
            throw SignetClientError(.keyUnavailable, isRetryable: false, reason: "the DPoP key could not sign", underlying: error)
        }
    }

    func nonce(for url: String) -> String? { nonces.withLock { $0[Self.origin(url)] } }

    /// Keeps the `DPoP-Nonce` a response carries (any status, RFC 9449 §8.2), and says whether the
    /// response asks for the request again with it: 400 `use_dpop_nonce` from the token endpoint
    /// (§8) or 401 with a DPoP challenge `error="use_dpop_nonce"` from a resource (§9).
    func asksForNonce(_ response: HTTPTransportResponse, from url: String) -> Bool {
        guard let nonce = response.header("DPoP-Nonce"), !nonce.isEmpty, nonce.utf8.count <= 256 else { return false }
        nonces.withLock { $0[Self.origin(url)] = nonce }
        switch response.status {
        case 400: return (try? JSONDecoder().decode(OAuthError.self, from: response.body))?.error == .useDPoPNonce
        case 401:
            return response.headers.contains { header in
                header.name.caseInsensitiveCompare("WWW-Authenticate") == .orderedSame
                    && AuthenticationChallenge(header.value).map { $0.scheme == "DPoP" && $0.oauthError?.error == .useDPoPNonce } == true
            }
        default: return false
        }
    }

    /// scheme://host:port, the key nonces are kept under.
    static func origin(_ url: String) -> String {
        guard let components = URLComponents(string: url) else { return url }
        return "\(components.scheme?.lowercased() ?? "")://\(components.host?.lowercased() ?? ""):\(components.port.map(String.init) ?? "")"
    }
}
