// Server-provided DPoP nonces — RFC 9449 §8, §9.
import Crypto
import Foundation
import SignetCore
import SignetStore

/// Makes and checks the nonces a DPoP proof must carry when the provider asks for them, so a
/// proof made ahead of time (on a device an attacker held for a while) is useless later.
///
/// Stateless: a nonce is an HMAC of the current time window under a key the provider keeps in
/// the store, so every instance makes and accepts the same ones. The current and the previous
/// window are accepted, so a nonce lives between one and two windows.
struct DPoPNonceIssuer: Sendable {
    let key: SymmetricKey
    let clock: SignetClock
    /// The length of a window. Default 5 minutes.
    let window: TimeInterval

    /// The nonce to hand out now (`DPoP-Nonce`).
    func current() -> String { nonce(forWindow: windowIndex(clock.now())) }

    /// Whether `nonce` is one handed out in this window or the one before.
    func isValid(_ nonce: String) -> Bool {
        let index = windowIndex(clock.now())
        return ConstantTime.equals(nonce, self.nonce(forWindow: index)) || ConstantTime.equals(nonce, self.nonce(forWindow: index - 1))
    }

    private func windowIndex(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / window).rounded(.down)) }

    private func nonce(forWindow index: Int64) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("dpop-nonce:\(index)".utf8), using: key)).prefix(18).base64URLEncodedString()
    }
}
