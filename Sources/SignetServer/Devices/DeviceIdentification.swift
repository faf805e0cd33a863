// Which activated device, if any, a request comes from: its client certificate, checked against the store.
import Foundation
import Hummingbird
import SignetCore
import SignetStore
import X509

/// A request's device, proved by its certificate: the record, the certificate and its thumbprint.
struct AuthenticatedDevice: Sendable {
    let record: DeviceRecord
    let certificate: Certificate
    /// RFC 8705 `x5t#S256` of the certificate.
    let thumbprint: String

    var instanceID: String { record.instanceID }
}

/// What a request's client certificate says about the device behind it: a decision, not a throw.
enum DeviceIdentity: Sendable {
    /// No certificate was presented.
    case none
    /// Not a valid device certificate of this provider (label: why).
    case invalid(String)
    /// A valid certificate whose instance is no activated device, or not its current certificate
    /// (an initial certificate, or one replaced by reactivation).
    case notActivated(instanceID: String, certificate: Certificate, thumbprint: String)
    /// The device's current certificate, but the device was revoked.
    case revoked(DeviceRecord)
    case device(AuthenticatedDevice)
}

/// Identifies the device behind a request, on every request that needs it.
///
/// The certificate is checked here, not in the TLS handshake, so that what the store says
/// counts at once on every instance: issuer and signature against the trusted device CAs
/// (a rotation needs no restart), validity, clientAuth, the device URI, and then the device
/// record — current certificate, not revoked (a lock on one instance is seen by all).
struct DeviceIdentification: Sendable {
    let source: ClientCertificateSource
    let authorities: DeviceAuthorities
    let store: any DeviceStore
    let clock: SignetClock

    /// What the request's certificate identifies.
    func identify(_ request: Request, context: SignetRequestContext) async throws -> DeviceIdentity {
        let certificate: Certificate
        switch await source.presented(request, context: context) {
        case .none: return .none
        case .unreadable: return .invalid("unreadable")
        case .certificate(let presented): certificate = presented
        }
        let now = clock.now()
        var (instanceID, refusal) = Self.check(certificate, against: try await authorities.recentTrustedCertificates(), now: now)
        if instanceID == nil, refusal == .foreignIssuer {
            // Perhaps a CA made a moment ago (on another instance): read them afresh before refusing.
            (instanceID, refusal) = Self.check(certificate, against: try await authorities.trustedCertificates(), now: now)
        }
        guard let instanceID else { return .invalid(refusal.label) }
        let thumbprint = try DeviceCertificateAuthority.x5tS256(of: certificate)
        guard let record = try await store.device(instanceID: instanceID),
            ConstantTime.equals(record.certificateThumbprint, thumbprint)
        else { return .notActivated(instanceID: instanceID, certificate: certificate, thumbprint: thumbprint) }
        guard record.revokedAt == nil else { return .revoked(record) }
        return .device(AuthenticatedDevice(record: record, certificate: certificate, thumbprint: thumbprint))
    }

    /// The instance id `certificate` names when one of `authorities` issued it validly, else why not.
    private static func check(_ certificate: Certificate, against authorities: [Certificate], now: Date) -> (String?, DeviceCertificateCheck.Reason) {
        var refusal = DeviceCertificateCheck.Reason.foreignIssuer
        for authority in authorities {
            switch DeviceCertificateAuthority.verify(certificate, issuedBy: authority, now: now) {
            case .valid(let id): return (id, refusal)
            case .invalid(let reason) where reason != .foreignIssuer: refusal = reason
            case .invalid: continue
            }
        }
        return (nil, refusal)
    }

    /// The activated, unrevoked device behind the request, its use recorded; anything else is
    /// refused with the documented `401` errors (docs/devices.md).
    func require(_ request: Request, context: SignetRequestContext) async throws -> AuthenticatedDevice {
        switch try await identify(request, context: context) {
        case .none:
            throw OAuthHTTPError(.unauthorized, .deviceCertificateRequired, "this endpoint needs the device's client certificate (mutual TLS)")
        case .invalid(let reason):
            throw OAuthHTTPError(.unauthorized, .invalidDeviceCertificate, "the client certificate is not a valid device certificate: \(reason)")
        case .notActivated:
            throw OAuthHTTPError(.unauthorized, .deviceNotActivated, "the certificate names no activated device (or not its current certificate)")
        case .revoked(let record):
            throw OAuthHTTPError(.unauthorized, .deviceRevoked, "the device was \(record.status)")
        case .device(let device):
            try await store.touchDevice(instanceID: device.instanceID, at: clock.now())
            return device
        }
    }
}
