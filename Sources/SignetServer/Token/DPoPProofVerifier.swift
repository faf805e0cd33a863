// Checking DPoP proofs — RFC 9449 §4.3.
import Foundation
import Hummingbird
import SignetCore
import SignetJOSE
import SignetStore

/// A verified DPoP proof: the key it was made with.
struct DPoPProof: Sendable, Equatable {
    /// The SHA-256 thumbprint (RFC 7638) of the proof's public key: what tokens are bound to.
    let jkt: String
    /// The JWS algorithm it was signed with (a FAPI 2.0 client may use only some).
    let alg: String
}

/// Checks the `DPoP` header of a request (RFC 9449 §4.3): the proof's form, signature and
/// request binding (``SignetJOSE/DPoPProofCheck``), a current server nonce when asked for, and
/// a `jti` never seen before (remembered in the store, so instances share it).
struct DPoPProofVerifier: Sendable {
    let replay: any ReplayStore
    let clock: SignetClock
    /// How old (or how far ahead, within `skew`) a proof's `iat` may be.
    let lifetime: TimeInterval
    let skew: TimeInterval
    /// Server-provided nonces, when the provider asks for them (RFC 9449 §8).
    var nonces: DPoPNonceIssuer? = nil
    /// The apps' DPoP keys already made, for their next proof.
    let proofKeys = JWKSignature()

    /// Why a proof is refused; the text is safe to send.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        /// The proof lacks a current server nonce: answer `use_dpop_nonce` with this one (RFC 9449 §8).
        var nonce: String? = nil
    }

    /// The proof in `values` (the request's `DPoP` header values), or `nil` when there is none.
    ///
    /// The stateless checks are ``SignetJOSE/DPoPProofCheck``'s; then the nonce, when the
    /// provider asks for one, and the `jti`, recorded once in the store. The nonce comes first,
    /// so a proof refused for it does not spend its `jti`.
    ///
    /// - Parameters:
    ///   - method: the request's method (`htm`).
    ///   - url: the endpoint's URL without query or fragment (`htu`).
    ///   - accessToken: the access token sent with it, at a resource (`ath`).
    func verify(_ values: [String], method: String, url: String, accessToken: String? = nil) async throws -> DPoPProof? {
        let check = DPoPProofCheck(lifetime: lifetime, skew: skew, keys: proofKeys)
        let checked: CheckedDPoPProof
        do {
            guard let proof = try await check.check(values, method: method, url: url, accessToken: accessToken, now: clock.now()) else { return nil }
            checked = proof
        } catch let refusal as DPoPProofRefusal {
            throw Refusal(description: refusal.description)
        }
        if let nonces {
            guard let nonce = checked.nonce, nonces.isValid(nonce) else {
                throw Refusal(description: "the DPoP proof needs the server's current nonce", nonce: nonces.current())
            }
        }
        let firstUse = try await replay.recordOnce(
            key: "dpop:\(checked.jkt):\(checked.jti)", expiresAt: check.replayHorizon(of: checked), now: clock.now())
        guard firstUse else { throw Refusal(description: "the DPoP proof's jti was already used") }
        return DPoPProof(jkt: checked.jkt, alg: checked.alg)
    }

    /// The proof `request` carries to an endpoint at `url` (`/token`, `/par`), refusals thrown as
    /// the OAuth errors those endpoints answer with.
    func proof(of request: Request, at url: String) async throws -> DPoPProof? {
        do {
            return try await verify(request.headers[values: .dpop], method: request.method.rawValue, url: url)
        } catch let refusal as Refusal {
            throw refusal.oauthError
        }
    }
}

extension DPoPProofVerifier.Refusal {
    /// The answer at `/token` and `/par` (RFC 9449 §7.1, §8.1): `use_dpop_nonce` with a fresh
    /// `DPoP-Nonce`, or `invalid_dpop_proof`.
    var oauthError: OAuthHTTPError {
        guard let nonce else { return OAuthHTTPError(.badRequest, .invalidDPoPProof, description) }
        return OAuthHTTPError(.badRequest, .useDPoPNonce, description, headers: [.dpopNonce: nonce])
    }
}
