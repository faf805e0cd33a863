// Where the device stands with the provider: GET /devices/status over mutual TLS, as a value.
import Foundation
import SignetCore

/// Where the installation stands with the provider (``DeviceEnrolment/status()``).
public enum DeviceStatus: Sendable, Equatable {
    /// No device certificate in the store, or one the provider does not take as an activated
    /// device's (an initial certificate, or one since replaced): activate.
    case notActivated
    /// The certificate authenticates an activated device.
    case activated(ActivatedDevice)
    /// The provider revoked the device (deactivated, replaced, removed or locked; `reason` is its
    /// `error_description`, which names which): delete the local key and activate again.
    case revoked(reason: String?)
    /// The provider does not take the certificate (`invalid_device_certificate`; `reason` says
    /// why: `expired`, `foreign_issuer`, …): delete the local key and activate again.
    case certificateRejected(reason: String?)
}

/// An activated device as `GET /devices/status` describes it.
public struct ActivatedDevice: Sendable, Equatable {
    /// instance_id
    public var instanceID: String
    /// certificate_not_after — when the device certificate expires.
    public var certificateNotAfter: Date
    /// reactivation_due — whether to reactivate now (``DeviceEnrolment/reactivate(accessToken:name:platform:)``).
    public var reactivationDue: Bool
    /// reactivation_due_at — from when a reactivation is due.
    public var reactivationDueAt: Date?
    /// attestation — the kind of attestation the device was activated with.
    public var attestation: String?
    /// authenticators — the FIDO UAF authenticators the provider has for this device.
    public var authenticators: [RegisteredAuthenticator]

    public init(
        instanceID: String, certificateNotAfter: Date, reactivationDue: Bool, reactivationDueAt: Date? = nil, attestation: String? = nil,
        authenticators: [RegisteredAuthenticator] = []
    ) {
        self.authenticators = authenticators
        self.instanceID = instanceID
        self.certificateNotAfter = certificateNotAfter
        self.reactivationDue = reactivationDue
        self.reactivationDueAt = reactivationDueAt
        self.attestation = attestation
    }
}

/// An authenticator as the provider lists it for a device.
public struct RegisteredAuthenticator: Sendable, Equatable, Decodable {
    /// aaid — `VVVV#MMMM`.
    public var aaid: String
    /// key_id — base64url KeyID.
    public var keyID: String
    /// name — e.g. "iOS PIN".
    public var name: String?
    /// verification — `pin`, `fingerprint`, `face`, `biometric` or `passcode`.
    public var verification: String?

    enum CodingKeys: String, CodingKey {
        case aaid, name, verification
        case keyID = "key_id"
    }
}

/// `200 {status, instance_id, certificate_not_after, reactivation_due, reactivation_due_at, attestation, authenticators}`.
struct StatusAnswer: Decodable {
    var status: String
    var instanceID: String
    var certificateNotAfter: Date
    var reactivationDue: Bool?
    var reactivationDueAt: Date?
    var attestation: String?
    var authenticators: [RegisteredAuthenticator]?

    enum CodingKeys: String, CodingKey {
        case status, attestation, authenticators
        case instanceID = "instance_id", certificateNotAfter = "certificate_not_after"
        case reactivationDue = "reactivation_due", reactivationDueAt = "reactivation_due_at"
    }
}

extension DeviceEnrolment {
    /// Asks the provider where the device stands: `GET /devices/status` over mutual TLS.
    ///
    /// With no certificate in the store the answer is ``DeviceStatus/notActivated``, without a
    /// request. The provider's `device_not_activated`, `device_revoked` and
    /// `invalid_device_certificate` are answers, not errors; `device_certificate_required` (the
    /// transport presented nothing, or a proxy dropped it) and any other refusal are thrown.
    public func status() async throws -> DeviceStatus {
        guard let current = try await credential() else { return .notActivated }
        let request = HTTPTransportRequest(method: "GET", url: try endpoint("/devices/status"), headers: [("Accept", "application/json")])
        let response = try await send(request, presenting: current)
        if response.status == 401, let error = Self.serverError(response) {
            switch error.error {
            case DeviceServerError.notActivated: return .notActivated
            case DeviceServerError.revoked: return .revoked(reason: error.errorDescription)
            case DeviceServerError.invalidCertificate: return .certificateRejected(reason: error.errorDescription)
            default: break
            }
        }
        let answer = try decode(StatusAnswer.self, from: response)
        guard answer.status == RegisteredDevice.Status.activated.rawValue else { return .revoked(reason: answer.status) }
        return .activated(
            ActivatedDevice(
                instanceID: answer.instanceID, certificateNotAfter: answer.certificateNotAfter,
                reactivationDue: answer.reactivationDue ?? answer.reactivationDueAt.map { client.now() >= $0 } ?? false,
                reactivationDueAt: answer.reactivationDueAt, attestation: answer.attestation, authenticators: answer.authenticators ?? []))
    }
}
