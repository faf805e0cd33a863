// The UAF endpoints an activated device calls, and the user's removal of an authenticator.
import Foundation
import Hummingbird
import NIOCore
import SignetCore
import SignetStore

/// `/uaf/…`: the trusted facets, registration, deregistration and PIN change (over mutual
/// TLS), and `DELETE /devices/{instance_id}/authenticators/{key_id}` (a login of the user,
/// from any of their devices).
struct AuthenticatorEndpoints: Sendable {
    let server: ServerContext
    let clients: any ClientStore
    let deviceStore: any DeviceStore
    let authenticators: any AuthenticatorStore
    let authenticatorPolicy: AuthenticatorPolicy
    let maxBodySize: Int
    let access: OwnResourceAccess
    let devices: DeviceIdentification
    let lifecycle: DeviceLifecycle
    let operations: UAFOperations

    /// How recent the login behind a registration or a removal must be.
    static let freshLogin: TimeInterval = 600

    var policy: AuthenticatorPolicy { authenticatorPolicy }

    /// `GET /uaf/facets/{client_id}`: the client's trusted facet list (its UAF appID).
    func facets(_ request: Request, context: SignetRequestContext) async throws -> Response {
        guard let clientID = context.parameters.get("client_id"), let client = try await clients.client(id: clientID) else {
            throw OAuthHTTPError(.notFound, .invalidRequest, "no such client")
        }
        var response = JSONResponse.make(UAFTrustedFacetList(ids: client.facetIDs), cacheable: true)
        response.headers[.contentType] = "application/fido.trusted-apps+json"
        return response
    }

    /// `POST /uaf/registration/request`: with the device's certificate and a fresh login of its
    /// user at the client's minimum assurance, a registration request.
    func registrationRequest(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context).record
        let claims = try await access.deviceUserToken(request, context: context, path: "/uaf/registration/request")
        guard claims.sub == device.userID, claims.clientID == device.clientID else {
            throw OAuthHTTPError(.forbidden, .accessDenied, "the login is another user's or app's than the device's")
        }
        guard let authTime = claims.authTime, Date(timeIntervalSince1970: TimeInterval(authTime)) >= server.now().addingTimeInterval(-Self.freshLogin)
        else {
            throw OwnResourceAccess.stepUpChallenge(
                "registering an authenticator needs a login within the last \(Int(Self.freshLogin)) seconds", maxAge: Int(Self.freshLogin))
        }
        return JSONResponse.make(
            try await operations.registrationRequest(
                device: device, client: try await client(of: device), acr: claims.acr ?? AuthorizationRequestValidator.acrOneFactor))
    }

    /// `POST /uaf/registration/response` (`SendUAFResponse`): stores the authenticator.
    func registrationResponse(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context).record
        let registered = try await operations.register(try await body(request), device: device, client: try await client(of: device))
        return JSONResponse.make(
            AuthenticatorAnswer(authenticator: AuthenticatorView(registered, policy: policy, now: server.now())), status: .created)
    }

    /// `POST /uaf/deregistration` `{"key_ids": […]}` (all when absent): removes authenticators of
    /// the device and answers with the UAF deregistration request the app applies.
    func deregistration(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context).record
        let data = try await body(request, required: false)
        var keyIDs: [String]?
        if !data.isEmpty {
            guard let parsed = try? JSONDecoder().decode(DeregistrationBody.self, from: data) else {
                throw OAuthHTTPError.invalidRequest("the body must be a JSON object with key_ids, a list of base64url KeyIDs (or {} for all)")
            }
            keyIDs = parsed.keyIDs
        }
        let answer = try await operations.deregister(device: device, client: try await client(of: device), keyIDs: keyIDs, by: .device)
        let text = String(decoding: try JSONEncoder().encode([answer]), as: UTF8.self)
        return JSONResponse.make(UAFReturnRequest(uafRequest: text, op: .deregistration, lifetimeMillis: 0))
    }

    /// `POST /uaf/pin/change/request` `{"key_id": …}`: an authentication request for the PIN
    /// authenticator, answered with the old PIN's proof and the new PIN key.
    func pinChangeRequest(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context).record
        guard let parsed = try? JSONDecoder().decode(PINChangeBody.self, from: try await body(request)) else {
            throw OAuthHTTPError.invalidRequest("the body must be a JSON object with key_id, a base64url KeyID")
        }
        guard let authenticator = try await authenticators.authenticator(userID: device.userID, keyID: parsed.keyID),
            authenticator.instanceID == device.instanceID
        else { throw UAFHTTPError(refusal: .unknownAuthenticator) }
        guard authenticator.pinKey != nil else { throw OAuthHTTPError.invalidRequest("this authenticator has no PIN") }
        return JSONResponse.make(
            try await operations.authenticationRequest(
                device: device, client: try await client(of: device), purpose: .changePIN, authenticator: authenticator))
    }

    /// `POST /uaf/pin/change/response` (`SendUAFResponse`): the PIN key is replaced.
    func pinChangeResponse(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context).record
        let proved = try await operations.authenticate(
            try await body(request), device: device, client: try await client(of: device), purposes: [.changePIN])
        let updated = try await authenticators.authenticator(id: proved.authenticator.id) ?? proved.authenticator
        return JSONResponse.make(AuthenticatorAnswer(authenticator: AuthenticatorView(updated, policy: policy, now: server.now())))
    }

    /// `DELETE /devices/{instance_id}/authenticators/{key_id}`: the user removes an authenticator
    /// (from another device, say), with a fresh login.
    func remove(_ request: Request, context: SignetRequestContext) async throws -> Response {
        guard let instanceID = context.parameters.get("instance_id"), let keyID = context.parameters.get("key_id") else {
            throw OAuthHTTPError(.notFound, .invalidRequest, "no such authenticator")
        }
        let claims = try await access.deviceUserToken(request, context: context, path: "/devices/\(instanceID)/authenticators/\(keyID)")
        guard let authTime = claims.authTime, Date(timeIntervalSince1970: TimeInterval(authTime)) >= server.now().addingTimeInterval(-Self.freshLogin)
        else {
            throw OwnResourceAccess.stepUpChallenge(
                "this needs a login within the last \(Int(Self.freshLogin)) seconds", maxAge: Int(Self.freshLogin))
        }
        // Another user's is answered exactly like one that does not exist.
        guard let authenticator = try await authenticators.authenticator(userID: claims.sub, keyID: keyID), authenticator.instanceID == instanceID,
            let device = try await deviceStore.device(instanceID: instanceID)
        else { throw OAuthHTTPError(.notFound, .invalidRequest, "no such authenticator") }
        guard let removed = try await operations.remove(authenticator, device: device, by: .user) else {
            throw OAuthHTTPError(.notFound, .invalidRequest, "no such authenticator")
        }
        return JSONResponse.make(AuthenticatorAnswer(authenticator: AuthenticatorView(removed, policy: policy, now: server.now())))
    }

    // MARK: shared

    private func client(of device: DeviceRecord) async throws -> ClientRecord {
        guard let client = try await clients.client(id: device.clientID) else {
            throw OAuthHTTPError(.unauthorized, .invalidClient, "the device's client is no longer registered")
        }
        return client
    }

    private func body(_ request: Request, required: Bool = true) async throws -> Data {
        try await JSONRequestBody.data(request, limit: maxBodySize, required: required)
    }

    private struct DeregistrationBody: Decodable {
        let keyIDs: [String]?
        enum CodingKeys: String, CodingKey { case keyIDs = "key_ids" }
    }

    private struct PINChangeBody: Decodable {
        let keyID: String
        enum CodingKeys: String, CodingKey { case keyID = "key_id" }
    }
}

/// `{"authenticator": …}`.
struct AuthenticatorAnswer: Codable, Sendable {
    let authenticator: AuthenticatorView
}
