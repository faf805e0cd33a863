// POST /devices/activation: an app installation's key gets its client certificate (issue 8, step 3).
import Foundation
import Hummingbird
import SignetCore
import X509

/// Activation: with an access token of a login that bound an instance id (scope `device`), the
/// app posts a PKCS#10 request for a P-256 key it made; Signet checks the request's signature
/// (proof of possession), spends the instance id (once: of parallel activations exactly one
/// wins), issues a client certificate from the device CA and records the device.
///
/// The body is the request in PEM (`application/pem-certificate-chain`, `text/plain`) or DER
/// (`application/pkcs10`); the answer is `201` with the certificate chain (device, CA) in PEM
/// and the device's record.
struct DeviceActivation: Sendable {
    let provider: Provider
    let access: OwnResourceAccess
    let authorities: DeviceAuthorities
    /// How long device certificates are valid.
    let certificateValidity: TimeInterval

    /// The media types a certificate signing request may come as (RFC 5967 for DER).
    static let bodyTypes: Set<String> = ["application/pkcs10", "application/pem-certificate-chain", "application/x-pem-file", "text/plain"]

    func activate(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let verified = try await access.verify(request, path: "/devices/activation", formBody: false)
        let claims = verified.claims
        guard claims.scope.split(separator: " ").contains(Substring(DeviceInstances.scope)) else {
            throw OwnResourceAccess.challenge(.insufficientScope, "activation needs a token with the scope device", status: .forbidden)
        }
        // A token that also names other APIs (RFC 8707) could be replayed here by one of them.
        guard Set(claims.aud) == [provider.issuer] else {
            throw OwnResourceAccess.challenge(.invalidToken, "activation needs a token for this provider alone, not one that names other resources", status: .unauthorized)
        }
        guard let grant = try await provider.store.grant(id: claims.grantID), let instanceID = grant.instanceID, grant.clientID == claims.clientID else {
            throw OAuthHTTPError.invalidRequest("this token's login bound no instance id (log in with scope device and the instance id as nonce)")
        }
        let body = try await request.body.collect(upTo: DeviceCertificateAuthority.maximumRequestSize + 1)
        guard body.readableBytes > 0 else { throw OAuthHTTPError.invalidRequest("the body must be a PKCS#10 certificate signing request") }
        let authority = try await authorities.issuing()
        let now = provider.now()
        // Checked before the instance id is spent, so a bad request does not burn it.
        let certificate: Certificate
        do {
            certificate = try authority.issue(csr: Array(buffer: body), instanceID: instanceID, validity: certificateValidity, now: now)
        } catch let error as SignetError {
            throw OAuthHTTPError.invalidRequest("\(error.code.label): \(error.reason)")
        }
        guard let instance = try await provider.store.consumeDeviceInstance(id: instanceID) else {
            throw OAuthHTTPError(.badRequest, .invalidGrant, "the instance id was already activated or has expired")
        }
        guard instance.clientID == claims.clientID, instance.userID == claims.sub, instance.expiresAt > now else {
            throw OAuthHTTPError(.badRequest, .invalidGrant, "the instance id has expired, or is another client's or user's")
        }
        let device = DeviceRecord(
            instanceID: instanceID, clientID: claims.clientID, userID: claims.sub, grantID: grant.id,
            certificateSerial: certificate.serialNumber.bytes.hexEncodedString(), certificateThumbprint: try DeviceCertificateAuthority.x5tS256(of: certificate),
            certificateNotAfter: certificate.notValidAfter, createdAt: now)
        do {
            try await provider.store.insertDevice(device)
        } catch {
            // Nothing was activated: give the instance id back, so the app can try again.
            try? await provider.store.insertDeviceInstance(instance)
            throw error
        }
        provider.logger.info(
            "device activated",
            metadata: [
                "event": "device.activated", "client_id": .string(device.clientID), "sub": .string(device.userID), "instance_id": .string(instanceID),
                "serial": .string(device.certificateSerial), "ca": .string(authority.fingerprint),
            ])
        await notify(device)
        return JSONResponse.make(
            ActivationAnswer(
                certificateChain: [try DeviceCertificateAuthority.pem(of: certificate), authority.certificatePEM],
                device: .init(device)),
            status: .created)
    }

    /// Tells the user a device was activated (issue 8: a stranger's activation should not go
    /// unnoticed), by the message sender, when the user has a phone number. A failed delivery is
    /// logged; the activation stands.
    private func notify(_ device: DeviceRecord) async {
        guard let user = try? await provider.store.user(id: device.userID), let phone = user.phoneNumber else { return }
        let clientName = (try? await provider.store.client(id: device.clientID))?.name ?? device.clientID
        let message = OutgoingMessage(
            id: provider.random.token(byteCount: 16), to: phone,
            body: "A new device was activated for \(clientName). If it was not you, contact support.", purpose: "device_activated",
            createdAt: provider.now())
        do { try await provider.messages.send(message) } catch {
            provider.logger.warning("device notice failed", metadata: ["event": "device.notice_failed", "error": .string(String(describing: error))])
        }
    }

    /// `GET /devices/ca.pem`: the trusted device CA certificates, for TLS terminators and apps.
    /// Nothing is made here: the first CA is made by the first activation (or `signet ca rotate`).
    func caCertificates(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let pems = try await authorities.trustedRecords().map(\.certificatePEM).joined(separator: "\n")
        guard !pems.isEmpty else { throw HTTPError(.notFound, message: "no device CA yet") }
        return Response(
            status: .ok, headers: [.contentType: "application/pem-certificate-chain", .cacheControl: "public, max-age=300"],
            body: .init(byteBuffer: ByteBuffer(string: pems)))
    }

    struct ActivationAnswer: Encodable {
        let certificateChain: [String]
        let device: DeviceView
        enum CodingKeys: String, CodingKey {
            case device
            case certificateChain = "certificate_chain"
        }
    }

    /// What the app learns about its device.
    struct DeviceView: Encodable {
        let instanceID: String
        let status: String
        let certificateSerial: String
        let certificateNotAfter: Int
        let attestation: String
        init(_ device: DeviceRecord) {
            instanceID = device.instanceID
            status = device.revokedAt == nil ? "activated" : "revoked"
            certificateSerial = device.certificateSerial
            certificateNotAfter = Int(device.certificateNotAfter.timeIntervalSince1970)
            attestation = device.attestation
        }
        enum CodingKeys: String, CodingKey {
            case status, attestation
            case instanceID = "instance_id"
            case certificateSerial = "certificate_serial"
            case certificateNotAfter = "certificate_not_after"
        }
    }
}
