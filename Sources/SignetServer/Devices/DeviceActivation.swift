// POST /devices/activation and /devices/reactivation: an app installation's key gets its client certificate.
import Foundation
import Hummingbird
import SignetCore
import SignetStore
import X509

/// Activation (issue 8, step 3) and reactivation.
///
/// Activation: with an access token of a login that bound an instance id (scope `device`), the
/// app posts a PKCS#10 request for a P-256 key it made; Signet checks the request's signature
/// (proof of possession), spends the instance id (once: of parallel activations exactly one
/// wins), issues a client certificate from the device CA and records the device.
///
/// Reactivation: the same, over mutual TLS with the current device certificate and with the
/// token of a fresh login (within ``freshLogin``) of the same user and app bound to a new instance
/// id; the old device is revoked at once (`replaced`).
///
/// The answer is `201 {"certificate_chain": [device, CA], "device": …}`.
struct DeviceActivation: Sendable {
    let server: ServerContext
    let grants: any GrantStore
    let deviceStore: any DeviceStore
    let instances: DeviceInstances
    let access: OwnResourceAccess
    let authorities: DeviceAuthorities
    let devices: DeviceIdentification
    let lifecycle: DeviceLifecycle
    let deviceCertificateValidity: TimeInterval
    let reactivationWindow: TimeInterval

    /// The answer when the login's instance id was activated already (or expired unused).
    static let spent = OAuthHTTPError(.badRequest, .invalidGrant, "the instance id was already activated or has expired")

    /// How recent the login behind a reactivation must be.
    static let freshLogin: TimeInterval = 600

    func activate(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let (claims, grant, instanceID) = try await enrolmentToken(request, context: context, path: "/devices/activation")
        if let bound = grant.deviceID {
            guard bound != instanceID else { throw Self.spent }
            throw OAuthHTTPError.invalidRequest("this login was made with an activated device's certificate: reactivate that device instead")
        }
        let enrolled = try await enrol(
            try await EnrolmentBody.read(request), instanceID: instanceID, claims: claims, grant: grant, replacing: nil,
            presented: try await devices.identify(request, context: context), context: context)
        try await lifecycle.record("device.activated", device: enrolled.device, by: .user)
        return answer(enrolled)
    }

    func reactivate(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let current = try await devices.require(request, context: context)
        let (claims, grant, instanceID) = try await enrolmentToken(request, context: context, path: "/devices/reactivation")
        guard claims.sub == current.record.userID, claims.clientID == current.record.clientID else {
            throw OAuthHTTPError(.forbidden, .accessDenied, "the login is another user's or app's than the device's")
        }
        guard instanceID != current.instanceID else {
            throw OAuthHTTPError.invalidRequest("reactivation needs a new instance id: ask for one and log in with it as the nonce")
        }
        guard grant.authTime >= server.now().addingTimeInterval(-Self.freshLogin) else {
            throw OwnResourceAccess.stepUpChallenge(
                "reactivation needs a login within the last \(Int(Self.freshLogin)) seconds", maxAge: Int(Self.freshLogin))
        }
        guard grant.deviceID != instanceID else { throw Self.spent }
        guard grant.deviceID == nil || grant.deviceID == current.instanceID else {
            throw OAuthHTTPError(.forbidden, .accessDenied, "the login was made with another device's certificate")
        }
        // The fresh login moves to the new device (a login over mutual TLS with the old certificate
        // was tied to the old one), so revoking the old device does not end it.
        let enrolled = try await enrol(
            try await EnrolmentBody.read(request), instanceID: instanceID, claims: claims, grant: grant, replacing: current.instanceID,
            presented: .none, context: context)
        try await lifecycle.record("device.reactivated", device: enrolled.device, by: .device)
        guard
            try await lifecycle.revoke(instanceID: current.instanceID, because: .replaced, by: .device, replacedBy: enrolled.device.instanceID) != nil
        else {
            // Locked, removed, deactivated or replaced by a parallel reactivation meanwhile: the
            // new device follows the old one's fate, so a lock can never be outrun.
            let reason = try await deviceStore.device(instanceID: current.instanceID)?.revocationReason ?? .replaced
            try await lifecycle.revoke(
                instanceID: enrolled.device.instanceID, because: reason, by: .device, note: "its predecessor was revoked during the reactivation")
            throw OAuthHTTPError(.unauthorized, .deviceRevoked, "the device was revoked during the reactivation (\(reason.rawValue))")
        }
        return answer(enrolled)
    }

    /// The verified token of an activating login: scope `device`, for this provider alone, its
    /// grant bound to an instance id of the token's client.
    private func enrolmentToken(
        _ request: Request, context: SignetRequestContext, path: String
    ) async throws -> (AccessTokenClaims, GrantRecord, instanceID: String) {
        let claims = try await access.verify(request, context: context, path: path, formBody: false).claims
        guard claims.scope.split(separator: " ").contains(Substring(DeviceInstances.scope)) else {
            throw OwnResourceAccess.challenge(.insufficientScope, "activation needs a token with the scope device", status: .forbidden)
        }
        // A token that also names other APIs (RFC 8707) could be replayed here by one of them.
        guard Set(claims.aud) == [server.issuer] else {
            throw OwnResourceAccess.challenge(
                .invalidToken, "activation needs a token for this provider alone, not one that names other resources", status: .unauthorized)
        }
        guard let grant = try await grants.grant(id: claims.grantID), let instanceID = grant.instanceID, grant.clientID == claims.clientID else {
            throw OAuthHTTPError.invalidRequest("this token's login bound no instance id (log in with scope device and the instance id as nonce)")
        }
        return (claims, grant, instanceID)
    }

    private struct Enrolled {
        let device: DeviceRecord
        let chain: [String]
    }

    /// Issues the certificate, spends the instance id and records the device; the grant of the
    /// activating login is tied to it (its refreshes need the certificate from now on).
    private func enrol(
        _ body: EnrolmentBody, instanceID: String, claims: AccessTokenClaims, grant: GrantRecord, replacing previous: String?,
        presented: DeviceIdentity, context: SignetRequestContext
    ) async throws -> Enrolled {
        let authority = try await authorities.issuing()
        let now = server.now()
        // Checked before the instance id is spent, so a bad request does not burn it.
        let certificate: Certificate
        do {
            certificate = try authority.issue(csrDER: body.csrDER, instanceID: instanceID, validity: deviceCertificateValidity, now: now)
        } catch let error as SignetError {
            throw OAuthHTTPError.invalidRequest("\(error.code.label): \(error.reason)")
        }
        guard let instance = try await deviceStore.consumeDeviceInstance(id: instanceID) else { throw Self.spent }
        guard instance.clientID == claims.clientID, instance.userID == claims.sub, instance.expiresAt > now else {
            throw OAuthHTTPError(.badRequest, .invalidGrant, "the instance id has expired, or is another client's or user's")
        }
        let device = DeviceRecord(
            instanceID: instanceID, clientID: claims.clientID, userID: claims.sub, grantID: grant.id,
            certificateSerial: certificate.serialNumber.bytes.hexEncodedString(),
            certificateThumbprint: try DeviceCertificateAuthority.x5tS256(of: certificate),
            certificateNotAfter: certificate.notValidAfter,
            attestation: Self.attestation(of: instance, certifying: certificate.publicKey, presented: presented), name: body.name,
            platform: body.platform, createdAt: now)
        do {
            try await deviceStore.insertDevice(device)
        } catch {
            // Nothing was activated: give the instance id back, so the app can try again.
            try? await deviceStore.insertDeviceInstance(instance)
            throw error
        }
        guard try await deviceStore.bindGrant(id: grant.id, toDevice: instanceID, replacing: previous) else {
            // A token request with another device's certificate tied the login elsewhere meanwhile.
            _ = try await deviceStore.revokeDevice(instanceID: instanceID, reason: .deactivated, replacedBy: nil, at: server.now())
            throw OAuthHTTPError(.conflict, .invalidRequest, "the login was tied to another device meanwhile; log in again")
        }
        await instances.giveBack(instance)
        return Enrolled(device: device, chain: [try DeviceCertificateAuthority.pem(of: certificate), authority.certificatePEM])
    }

    /// What vouches for the new device's key: the instance's attestation only when the activation
    /// comes over mutual TLS with that instance's initial certificate and certifies the very key
    /// that certificate holds (the key the ``AttestationVerifier`` judged); otherwise `none`, so an
    /// attested instance id cannot lend its label to a key made anywhere else.
    static func attestation(of instance: DeviceInstanceRecord, certifying key: Certificate.PublicKey, presented: DeviceIdentity) -> String {
        guard let kind = instance.attestation, case .notActivated(let presentedID, let initial, _) = presented, presentedID == instance.id,
            initial.publicKey == key
        else { return AttestationResult.none.kind }
        return kind
    }

    private func answer(_ enrolled: Enrolled) -> Response {
        JSONResponse.make(
            DeviceAnswer(certificateChain: enrolled.chain, device: DeviceView(enrolled.device, reactivationWindow: reactivationWindow)),
            status: .created)
    }
}
