// POST /devices/initial-certificate: a short-lived certificate before the first login (MEPi's initial client certificate).
import Crypto
import Foundation
import Hummingbird
import SignetCore
import SignetStore
import X509

/// Gives an app a certificate valid a few minutes before anyone has logged in, so even the
/// first login can run over mutual TLS; its attestation (judged by the ``AttestationVerifier``)
/// is kept with the instance and, after activation, with the device and its tokens.
///
/// Body (`application/json`): `client_id`, `csr` (PEM), optionally `attestation` (base64url),
/// `platform`, and `instance_id` to swap in a fresh certificate for an instance mid-login —
/// then the request must come with that instance's current initial certificate. An initial
/// certificate authenticates no device endpoint; only activation makes a device.
struct InitialCertificates: Sendable {
    let server: ServerContext
    let deviceStore: any DeviceStore
    let initialCertificateValidity: TimeInterval
    let instances: DeviceInstances
    let authorities: DeviceAuthorities
    let devices: DeviceIdentification
    let verifier: any AttestationVerifier

    /// The largest attestation object taken (App Attest's are about 5 KiB).
    static let maximumAttestationSize = 16 * 1024

    func issue(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: Self.maximumAttestationSize * 2 + DeviceCertificateAuthority.maximumRequestSize)
        let json = try EnrolmentBody.decodeJSON(Body.self, from: body)
        guard let clientID = json.clientID, !clientID.isEmpty, clientID.utf8.count <= 128 else {
            throw OAuthHTTPError.invalidRequest("client_id is missing")
        }
        guard let csr = json.csr, !csr.isEmpty else { throw OAuthHTTPError.invalidRequest("csr is missing") }
        let platform = try json.platform.map(EnrolmentBody.checkedPlatform)
        var attestation: [UInt8]?
        if let encoded = json.attestation {
            guard encoded.utf8.count <= Self.maximumAttestationSize * 4 / 3 + 4, let decoded = Data(base64URLEncoded: encoded) else {
                throw OAuthHTTPError.invalidRequest("attestation must be base64url, at most \(Self.maximumAttestationSize) bytes")
            }
            attestation = Array(decoded)
        }
        let key: P256.Signing.PublicKey
        let csrDER: [UInt8]
        do {
            csrDER = try DeviceCertificateAuthority.csrDER(fromPEM: csr)
            key = try DeviceCertificateAuthority.provenDeviceKey(csrDER: csrDER)
        } catch let error as SignetError {
            throw OAuthHTTPError.invalidRequest("\(error.code.label): \(error.reason)")
        }

        let instance: DeviceInstanceRecord
        if let instanceID = json.instanceID {
            instance = try await swapped(instanceID, clientID: clientID, request: request, context: context)
            // The new key must be vouched for as the first was: the instance's label covers only keys judged alike.
            let verdict = try await judge(clientID: clientID, instanceID: instance.id, platform: platform, attestation: attestation, key: key)
            guard verdict.kind == (instance.attestation ?? AttestationResult.none.kind) else {
                throw OAuthHTTPError.invalidRequest(
                    "the new key's attestation (\(verdict.kind)) is not the instance's (\(instance.attestation ?? AttestationResult.none.kind))")
            }
        } else {
            instance = try await instances.makeInstance(clientID: clientID, context: context) { instanceID in
                try await judge(clientID: clientID, instanceID: instanceID, platform: platform, attestation: attestation, key: key)
            }
        }
        let authority = try await authorities.issuing()
        let certificate: Certificate
        do {
            certificate = try authority.issue(
                csrDER: csrDER, instanceID: instance.id, validity: initialCertificateValidity, now: server.now())
        } catch let error as SignetError {
            throw OAuthHTTPError.invalidRequest("\(error.code.label): \(error.reason)")
        }
        return JSONResponse.make(
            Answer(
                instanceID: instance.id, certificateChain: [try DeviceCertificateAuthority.pem(of: certificate), authority.certificatePEM],
                expiresAt: Int(certificate.notValidAfter.timeIntervalSince1970), attestation: instance.attestation ?? AttestationResult.none.kind),
            status: .created)
    }

    /// The instance a swap is for: unexpired, not activated, this client's, and the request
    /// comes with a valid initial certificate naming it.
    private func swapped(_ instanceID: String, clientID: String, request: Request, context: SignetRequestContext) async throws -> DeviceInstanceRecord
    {
        guard case .notActivated(let presented, _, _) = try await devices.identify(request, context: context), presented == instanceID else {
            throw OAuthHTTPError(
                .unauthorized, .deviceCertificateRequired, "a fresh initial certificate needs the instance's current one (mutual TLS)")
        }
        guard let instance = try await deviceStore.deviceInstance(id: instanceID), instance.clientID == clientID, instance.expiresAt > server.now()
        else {
            throw OAuthHTTPError(.badRequest, .invalidGrant, "the instance id has expired, was activated, or is another client's")
        }
        return instance
    }

    private func judge(clientID: String, instanceID: String, platform: String?, attestation: [UInt8]?, key: P256.Signing.PublicKey) async throws
        -> AttestationResult
    {
        do {
            return try await verifier.verify(
                AttestationEvidence(clientID: clientID, instanceID: instanceID, platform: platform, attestation: attestation, publicKey: key))
        } catch let refusal as AttestationRefusal {
            throw OAuthHTTPError.invalidRequest("the attestation was refused: \(refusal.reason)")
        }
    }

    private struct Body: Decodable {
        let clientID: String?
        let csr: String?
        let attestation: String?
        let platform: String?
        let instanceID: String?
        enum CodingKeys: String, CodingKey {
            case csr, attestation, platform
            case clientID = "client_id"
            case instanceID = "instance_id"
        }
    }

    private struct Answer: Encodable {
        let instanceID: String
        let certificateChain: [String]
        let expiresAt: Int
        let attestation: String
        enum CodingKeys: String, CodingKey {
            case attestation
            case instanceID = "instance_id"
            case certificateChain = "certificate_chain"
            case expiresAt = "expires_at"
        }
    }
}
