// The device endpoints an app and its user call after activation: status, deactivation, the device list.
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// Status and deactivation (over mutual TLS, by the device itself), and the user's device list
/// with rename, remove and lock (with a token of a login, scope `device`).
struct DeviceSelfService: Sendable {
    let server: ServerContext
    let deviceStore: any DeviceStore
    let authenticators: any AuthenticatorStore
    let access: OwnResourceAccess
    let devices: DeviceIdentification
    let lifecycle: DeviceLifecycle
    let authenticatorPolicy: AuthenticatorPolicy
    let reactivationWindow: TimeInterval

    /// How recent the login behind a removal or lock must be (RFC 9470 `max_age`).
    static let freshLogin: TimeInterval = 600

    // MARK: The device itself (mutual TLS)

    /// `GET /devices/status` (MEPi Status): the device's certificate, whether reactivation is due, its attestation.
    func status(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context).record
        let dueAt = device.certificateNotAfter.addingTimeInterval(-reactivationWindow)
        return JSONResponse.make(
            StatusAnswer(
                status: device.status, instanceID: device.instanceID, certificateNotAfter: Int(device.certificateNotAfter.timeIntervalSince1970),
                reactivationDue: server.now() >= dueAt, reactivationDueAt: Int(dueAt.timeIntervalSince1970), attestation: device.attestation,
                authenticators: try await authenticators.authenticators(instanceID: device.instanceID).map {
                    AuthenticatorView($0, policy: authenticatorPolicy, now: server.now())
                }))
    }

    /// `POST /devices/deactivation`: the app gives up its certificate; its grants and tokens end with it.
    func deactivate(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context)
        guard let revoked = try await lifecycle.revoke(instanceID: device.instanceID, because: .deactivated, by: .device) else {
            throw OAuthHTTPError(.unauthorized, .deviceRevoked, "the device was revoked already")
        }
        return view(revoked)
    }

    // MARK: The user's list (a login's token)

    /// `GET /devices`: the user's devices, oldest first.
    func list(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let claims = try await access.deviceUserToken(request, context: context, path: "/devices")
        let reactivationWindow = reactivationWindow
        let list = try await deviceStore.devices(userID: claims.sub).map { DeviceView($0, reactivationWindow: reactivationWindow) }
        return JSONResponse.make(DeviceList(devices: list))
    }

    /// `PATCH /devices/{instance_id}` `{"name": …}`.
    func rename(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let instanceID = try Self.instanceID(context)
        let claims = try await access.deviceUserToken(request, context: context, path: "/devices/\(instanceID)")
        let body = try await request.body.collect(upTo: 4096)
        guard let name = try EnrolmentBody.decodeJSON(RenameBody.self, from: body).name else {
            throw OAuthHTTPError.invalidRequest("name is missing")
        }
        let checked = try EnrolmentBody.checkedName(name)
        _ = try await ownDevice(instanceID, of: claims)
        guard let renamed = try await deviceStore.renameDevice(instanceID: instanceID, name: checked) else {
            throw OAuthHTTPError(.conflict, .invalidRequest, "the device was revoked; it can no longer be renamed")
        }
        return view(renamed)
    }

    /// `DELETE /devices/{instance_id}`: removes a device (revoked, kept in the list as `removed`).
    func remove(_ request: Request, context: SignetRequestContext) async throws -> Response {
        try await revoke(request, context: context, because: .removed)
    }

    /// `POST /devices/{instance_id}/lock`: a lost or stolen device, locked at once.
    func lock(_ request: Request, context: SignetRequestContext) async throws -> Response {
        try await revoke(request, context: context, because: .locked)
    }

    private func revoke(_ request: Request, context: SignetRequestContext, because reason: DeviceRevocationReason) async throws -> Response {
        let instanceID = try Self.instanceID(context)
        let path = reason == .locked ? "/devices/\(instanceID)/lock" : "/devices/\(instanceID)"
        let claims = try await access.deviceUserToken(request, context: context, path: path)
        guard let authTime = claims.authTime, Date(timeIntervalSince1970: TimeInterval(authTime)) >= server.now().addingTimeInterval(-Self.freshLogin)
        else {
            throw OwnResourceAccess.stepUpChallenge(
                "this needs a login within the last \(Int(Self.freshLogin)) seconds", maxAge: Int(Self.freshLogin))
        }
        let device = try await lifecycle.current(try await ownDevice(instanceID, of: claims))
        guard device.revokedAt == nil, device.userID == claims.sub else { return view(device) }
        if let revoked = try await lifecycle.revoke(instanceID: device.instanceID, because: reason, by: .user) { return view(revoked) }
        // Revoked by someone else a moment ago: show what stands.
        return view(try await deviceStore.device(instanceID: device.instanceID) ?? device)
    }

    /// The user's device with this id; another user's is answered exactly like one that does not exist.
    private func ownDevice(_ instanceID: String, of claims: AccessTokenClaims) async throws -> DeviceRecord {
        guard let device = try await deviceStore.device(instanceID: instanceID), device.userID == claims.sub else {
            throw OAuthHTTPError(.notFound, .invalidRequest, "no such device")
        }
        return device
    }

    private static func instanceID(_ context: SignetRequestContext) throws -> String {
        guard let id = context.parameters.get("instance_id"), DeviceInstances.isWellFormed(id) else {
            throw OAuthHTTPError(.notFound, .invalidRequest, "no such device")
        }
        return id
    }

    private func view(_ device: DeviceRecord) -> Response {
        JSONResponse.make(DeviceAnswer(device: DeviceView(device, reactivationWindow: reactivationWindow)))
    }

    private struct RenameBody: Decodable { let name: String? }

    private struct DeviceList: Encodable { let devices: [DeviceView] }

    private struct StatusAnswer: Encodable {
        let status: String
        let instanceID: String
        let certificateNotAfter: Int
        let reactivationDue: Bool
        let reactivationDueAt: Int
        let attestation: String
        /// The device's FIDO UAF authenticators.
        let authenticators: [AuthenticatorView]
        enum CodingKeys: String, CodingKey {
            case status, attestation, authenticators
            case instanceID = "instance_id"
            case certificateNotAfter = "certificate_not_after"
            case reactivationDue = "reactivation_due"
            case reactivationDueAt = "reactivation_due_at"
        }
    }
}
