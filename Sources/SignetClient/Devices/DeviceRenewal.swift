// Renewing and giving up the device certificate, both over mutual TLS with the current one.
import Foundation
import SignetCore

/// What ``DeviceEnrolment/deactivate()`` found and did.
public enum DeactivationOutcome: Sendable, Equatable {
    /// The provider deactivated the device; the local key and chain are deleted.
    case deactivated(RegisteredDevice)
    /// The provider had already revoked the device (`device_revoked`, its description naming
    /// why); the local key and chain are deleted.
    case alreadyRevoked(reason: String?)
    /// The store held no certificate: nothing was sent or deleted.
    case notActivated
}

extension DeviceEnrolment {
    /// Renews the device certificate before it expires (``ActivatedDevice/reactivationDue``): a
    /// new key and CSR to `POST /devices/reactivation`, over mutual TLS with the current
    /// certificate, with the access token of a fresh device login bound to a new instance id
    /// (``instanceID()``, then a login with it as the nonce).
    ///
    /// The new key and chain replace the old ones only when the provider has issued the new
    /// certificate (which revokes the old); a refused reactivation leaves the store as it was.
    ///
    /// - Throws: `device_not_activated` when the store holds no certificate; `server` with the
    ///   provider's error (``DeviceServerError``: e.g. `device_revoked`, `invalid_device_certificate`).
    @discardableResult
    public func reactivate(accessToken: String, name: String? = nil, platform: DevicePlatform = .current) async throws -> RegisteredDevice {
        try Self.check(name: name)
        guard let current = try await credential() else {
            throw SignetClientError(.deviceNotActivated, isRetryable: false, reason: "there is no device certificate to reactivate")
        }
        let key = try await store { try await keyStore.makeKey() }
        let body = ActivationRequestBody(csr: try await DeviceCSR.make(for: key), name: name, platform: platform)
        let request = HTTPTransportRequest(
            method: "POST", url: try endpoint("/devices/reactivation"), headers: Self.jsonHeaders, body: try Self.json(body))
        let answer = try decode(ActivationAnswer.self, from: try await send(request, presenting: current, accessToken: accessToken))
        try await keep(key, answer.certificateChain, instanceID: answer.device.instanceID)
        return answer.device
    }

    /// Deactivates the device: `POST /devices/deactivation` over mutual TLS, then deletes the
    /// local key and chain, also when the provider says the device was already revoked.
    ///
    /// With no certificate in the store, nothing is sent (``DeactivationOutcome/notActivated``).
    /// Any other refusal is thrown and the store kept, so the call can be tried again.
    public func deactivate() async throws -> DeactivationOutcome {
        guard let current = try await credential() else { return .notActivated }
        let request = HTTPTransportRequest(method: "POST", url: try endpoint("/devices/deactivation"), headers: [("Accept", "application/json")])
        let response = try await send(request, presenting: current)
        let outcome: DeactivationOutcome
        if response.status == 401, let error = Self.serverError(response), error.error == DeviceServerError.revoked {
            outcome = .alreadyRevoked(reason: error.errorDescription)
        } else {
            outcome = .deactivated(try decode(DeviceAnswerBody.self, from: response).device)
        }
        try await store { try await keyStore.delete() }
        return outcome
    }

    /// The OAuth error an answer carries, if it carries one.
    static func serverError(_ response: HTTPTransportResponse) -> OAuthError? {
        try? JSONDecoder().decode(OAuthError.self, from: response.body)
    }
}
