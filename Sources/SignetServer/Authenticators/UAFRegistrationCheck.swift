// The checks of a registration assertion (UAF Protocol §3.4.6.5 steps on the assertion), as a decision.
import Foundation
import SignetCore

/// A registration that passed every check on its assertion: what to store.
struct VerifiedRegistration: Sendable, Equatable {
    let kind: AuthenticatorKind
    let data: UAFKeyRegistrationData
    /// The PIN key (X9.62) of a PIN authenticator.
    let pinKey: [UInt8]?
}

/// Checks a registration assertion against its checked envelope and the client's policy.
struct UAFRegistrationCheck: Sendable {
    /// The AAIDs the client accepts.
    let accepted: [String]

    func verify(_ response: CheckedUAFResponse) -> Result<VerifiedRegistration, UAFRefusal> {
        let assertion: UAFRegistrationAssertion
        do { assertion = try UAFRegistrationAssertion(tlv: response.assertion) } catch let error as SignetError {
            return .failure(.malformed("the registration assertion is malformed: \(error.reason)"))
        } catch {
            return .failure(.malformed("the registration assertion is malformed"))
        }
        let data = assertion.keyRegistrationData
        guard ConstantTime.equals(data.finalChallengeHash, response.finalChallengeHash) else {
            return .failure(.malformed("TAG_FINAL_CHALLENGE_HASH is not the hash of fcParams"))
        }
        guard let kind = AuthenticatorCatalog.kind(data.aaid), accepted.contains(kind.aaid) else {
            return .failure(
                .unacceptable("the authenticator \(data.aaid) is not accepted by this client's policy", uafStatus: .unacceptableAuthenticator))
        }
        guard data.authenticationMode == UAFAuthenticationMode.userVerified.rawValue else {
            return .failure(.malformed("a registration's authentication mode must be 0x01"))
        }
        guard kind.signatureAlgorithms.contains(data.signatureAlgorithm), kind.publicKeyFormats.contains(data.publicKeyFormat) else {
            return .failure(
                .unacceptable("\(kind.aaid) does not use \(data.signatureAlgorithm) with \(data.publicKeyFormat)", uafStatus: .unacceptableContent))
        }
        guard let key = UAFPublicKey(data.publicKey, format: data.publicKeyFormat), key.fits(data.signatureAlgorithm) else {
            return .failure(
                .unacceptable(
                    "TAG_PUB_KEY is not a usable \(data.publicKeyFormat) key for \(data.signatureAlgorithm)", uafStatus: .unacceptableContent))
        }
        // Surrogate basic attestation: the new key signs its own registration data (seed 002).
        // Full basic attestation needs the authenticator's metadata, which Signet does not hold.
        guard case .basicSurrogate(let signature) = assertion.attestation else {
            return .failure(
                .unacceptable(
                    "only surrogate basic attestation is accepted (no authenticator metadata is configured)", uafStatus: .unacceptableAttestation))
        }
        guard key.isValid(signature, algorithm: data.signatureAlgorithm, for: assertion.signedBytes) else {
            return .failure(.invalidSignature("the attestation signature over the Key Registration Data does not verify"))
        }
        var pinKey: [UInt8]?
        for item in data.extensions + assertion.extensions {
            switch item.id {
            case UAFPINProof.keyExtension where kind.verification == .pin && pinKey == nil && data.extensions.contains(item):
                guard UAFPINProof.isPublicKey(item.data) else { return .failure(.malformed("\(UAFPINProof.keyExtension) is not a P-256 point")) }
                pinKey = item.data
            default:
                if item.critical { return .failure(.malformed("the critical extension \(item.id.prefix(32)) is not understood")) }
            }
        }
        if kind.verification == .pin, pinKey == nil {
            return .failure(.malformed("a PIN authenticator must register its PIN key (\(UAFPINProof.keyExtension)) in the Key Registration Data"))
        }
        return .success(VerifiedRegistration(kind: kind, data: data, pinKey: pinKey))
    }
}
