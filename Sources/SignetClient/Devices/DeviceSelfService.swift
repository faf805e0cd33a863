// The signed-in user's devices: list, rename, remove, lock (access token, scope `device`).
import Foundation
import SignetCore

extension DeviceEnrolment {
    /// The user's devices: `GET /devices`.
    ///
    /// Each of these calls sends `accessToken` (scope `device`) as ``issueCertificate(accessToken:name:platform:)``
    /// does, over mutual TLS when the store holds a certificate that has not expired, since a token
    /// obtained with it is bound to it (RFC 8705 §3) and refused without it.
    public func devices(accessToken: String) async throws -> [RegisteredDevice] {
        try await call("GET", "/devices", accessToken: accessToken, as: DeviceListAnswer.self).devices
    }

    /// Renames a device: `PATCH /devices/{instance_id}` with `{name}` (1 to 64 characters).
    @discardableResult
    public func rename(_ instanceID: String, to name: String, accessToken: String) async throws -> RegisteredDevice {
        try Self.check(name: name)
        return try await call(
            "PATCH", try Self.path(instanceID), accessToken: accessToken, body: try Self.json(RenameRequestBody(name: name)),
            as: DeviceAnswerBody.self
        ).device
    }

    /// Removes a device (status `removed`, its certificate revoked): `DELETE /devices/{instance_id}`.
    /// The provider wants a login within the last 10 minutes.
    @discardableResult
    public func remove(_ instanceID: String, accessToken: String) async throws -> RegisteredDevice {
        try await call("DELETE", try Self.path(instanceID), accessToken: accessToken, as: DeviceAnswerBody.self).device
    }

    /// Locks a device (a lost phone; status `locked`, its certificate revoked):
    /// `POST /devices/{instance_id}/lock`. The provider wants a login within the last 10 minutes.
    @discardableResult
    public func lock(_ instanceID: String, accessToken: String) async throws -> RegisteredDevice {
        try await call("POST", try Self.path(instanceID) + "/lock", accessToken: accessToken, as: DeviceAnswerBody.self).device
    }

    private func call<Answer: Decodable>(_ method: String, _ path: String, accessToken: String, body: Data? = nil, as type: Answer.Type) async throws
        -> Answer
    {
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let request = HTTPTransportRequest(method: method, url: try endpoint(path), headers: headers, body: body)
        // A store that cannot be read must not keep the user from their list (or from locking a lost phone).
        var current = try? await credential()
        if let credential = current, credential.notValidAfter <= client.now() { current = nil }
        return try decode(Answer.self, from: try await send(request, presenting: current, accessToken: accessToken))
    }

    /// `/devices/{instance_id}`; an instance id is base64url, anything else is refused before it reaches a URL.
    static func path(_ instanceID: String) throws -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard !instanceID.isEmpty, instanceID.count <= 128, instanceID.allSatisfy(allowed.contains) else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "an instance id is base64url")
        }
        return "/devices/" + instanceID
    }
}
