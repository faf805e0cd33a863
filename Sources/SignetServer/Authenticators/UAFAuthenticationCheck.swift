// The checks of an authentication assertion (UAF Protocol §3.5.7.5 steps on the assertion), as decisions.
import Crypto
import Foundation
import SignetCore
import SignetStore

/// An authentication whose assertion passed every check that needs no storage.
struct VerifiedAuthentication: Sendable, Equatable {
    let authenticator: AuthenticatorRecord
    let signedData: UAFSignedData
    /// The PIN proof (DER signature) of a PIN authenticator, still to be checked against the schedule.
    let pinProof: [UInt8]?
    /// A new PIN key, in a PIN change.
    let newPINKey: [UInt8]?
}

/// Checks an authentication assertion.
struct UAFAuthenticationCheck: Sendable {
    /// The AAIDs the client accepts now (an authenticator registered under an older policy is refused).
    let accepted: [String]

    /// Reads the assertion, to find its authenticator by KeyID.
    static func read(_ response: CheckedUAFResponse) -> Result<UAFAuthenticationAssertion, UAFRefusal> {
        do { return .success(try UAFAuthenticationAssertion(tlv: response.assertion)) } catch let error as SignetError {
            return .failure(.malformed("the authentication assertion is malformed: \(error.reason)"))
        } catch {
            return .failure(.malformed("the authentication assertion is malformed"))
        }
    }

    /// Checks `assertion` against the authenticator it names (registered on the device the
    /// response came from) and the envelope.
    func verify(_ assertion: UAFAuthenticationAssertion, by record: AuthenticatorRecord?, device: DeviceRecord, response: CheckedUAFResponse)
        -> Result<VerifiedAuthentication, UAFRefusal>
    {
        let data = assertion.signedData
        // An authenticator of another device or user is answered like one that does not exist.
        guard let record, record.instanceID == device.instanceID, record.userID == device.userID else { return .failure(.unknownAuthenticator) }
        guard record.aaid == data.aaid else {
            return .failure(.unacceptable("the assertion's AAID is not the one registered with this KeyID", uafStatus: .unacceptableContent))
        }
        guard accepted.contains(record.aaid) else {
            return .failure(
                .unacceptable("the authenticator \(record.aaid) is no longer accepted by this client's policy", uafStatus: .unacceptableAuthenticator)
            )
        }
        guard record.cloneSuspectedAt == nil else { return .failure(.cloned) }
        if let only = response.serverData.authenticatorID, only != record.id {
            return .failure(.serverData("the request was made for another authenticator"))
        }
        guard ConstantTime.equals(data.finalChallengeHash, response.finalChallengeHash) else {
            return .failure(.malformed("TAG_FINAL_CHALLENGE_HASH is not the hash of fcParams"))
        }
        guard data.signatureAlgorithm.rawValue == record.signatureAlgorithm else {
            return .failure(.unacceptable("the assertion declares another algorithm than the one registered", uafStatus: .unacceptableContent))
        }
        guard let keyBytes = Data(base64URLEncoded: record.publicKey),
            let key = UAFPublicKey(Array(keyBytes), format: UAFPublicKeyFormat(rawValue: record.publicKeyFormat))
        else { return .failure(.unacceptable("the registered key cannot be read", uafStatus: .unacceptableKey)) }
        guard key.isValid(assertion.signature, algorithm: data.signatureAlgorithm, for: assertion.signedBytes) else {
            return .failure(.invalidSignature("the assertion's signature does not verify"))
        }
        // Transaction confirmation: the hash of what was shown must be the text the request carried.
        if let expected = response.serverData.transactionHash {
            guard data.authenticationMode == UAFAuthenticationMode.transactionConfirmed.rawValue,
                ConstantTime.equals(Data(data.transactionContentHash).base64URLEncodedString(), expected)
            else { return .failure(.transactionMismatch("the confirmed transaction is not the text that was sent")) }
        } else {
            guard data.authenticationMode == UAFAuthenticationMode.userVerified.rawValue, data.transactionContentHash.isEmpty else {
                return .failure(.transactionMismatch("a transaction was confirmed although none was sent"))
            }
        }
        var pinProof: [UInt8]?, newPINKey: [UInt8]?
        for item in data.extensions {
            switch item.id {
            case UAFPINProof.proofExtension where record.pinKey != nil && pinProof == nil: pinProof = item.data
            case UAFPINProof.newKeyExtension where record.pinKey != nil && newPINKey == nil && response.serverData.purpose == .changePIN:
                guard UAFPINProof.isPublicKey(item.data) else { return .failure(.malformed("\(UAFPINProof.newKeyExtension) is not a P-256 point")) }
                newPINKey = item.data
            default:
                if item.critical { return .failure(.malformed("the critical extension \(item.id.prefix(32)) is not understood")) }
            }
        }
        if record.pinKey != nil, pinProof == nil {
            return .failure(.malformed("a PIN authenticator's assertion must carry its PIN proof (\(UAFPINProof.proofExtension))"))
        }
        if response.serverData.purpose == .changePIN, newPINKey == nil {
            return .failure(.malformed("a PIN change must carry the new PIN key (\(UAFPINProof.newKeyExtension))"))
        }
        return .success(VerifiedAuthentication(authenticator: record, signedData: data, pinProof: pinProof, newPINKey: newPINKey))
    }

    /// base64url SHA-256 of a transaction text, as serverData keeps it.
    static func transactionHash(_ text: String) -> String { Data(SHA256.hash(data: Data(text.utf8))).base64URLEncodedString() }
}
