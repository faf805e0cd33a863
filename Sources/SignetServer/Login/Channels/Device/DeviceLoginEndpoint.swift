// Device login (MEPi biometric login): an activated device's authenticator instead of a password.
import Foundation
import Hummingbird
import NIOCore
import SignetCore
import SignetStore

/// `POST /login/device/start` and `/login/device/finish`, over mutual TLS.
///
/// The start takes the `/authorize` parameters (checked by the one validator, pushed or signed
/// when the client requires it) and answers with a UAF authentication request for the device's
/// authenticators; the finish takes the signed response and answers with an authorization code
/// issued like every other, redeemed at `/token` with PKCE and the device's certificate. The
/// login is a ``LoginSessionRecord`` of channel `device`, run by ``LoginFlow``: the hosted page's
/// "log in with your phone" can start one for a user and wait for it (the app-switch issue).
struct DeviceLoginEndpoint: Sendable {
    let server: ServerContext
    let clients: any ClientStore
    let users: any UserStore
    /// Logins in progress.
    let logins: any GrantStore
    let runner: LoginRunner
    let loginSessions: LoginSessions
    let requests: AuthorizationRequestReader
    let devices: DeviceIdentification
    let operations: UAFOperations
    let authenticatorPolicy: AuthenticatorPolicy
    let maxBodySize: Int

    /// The longest transaction text a login may ask the user to confirm.
    static let maximumTransactionLength = 1000

    func start(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context).record
        let fields = try await body([String: String].self, request)
        var parameters = FormParameters(
            fields.filter { $0.key != Self.transactionField }.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) })
        if parameters[OAuthParameter.clientID] == nil { parameters.append(OAuthParameter.clientID, device.clientID) }
        let authorization: ValidatedAuthorizationRequest
        let client: ClientRecord
        switch try await requests.read(parameters, from: .native).decision {
        case .showError(let error), .redirectError(let error, _, _):
            throw OAuthHTTPError(error.error == .invalidClient ? .unauthorized : .badRequest, error)
        case .valid(let valid, let found):
            (authorization, client) = (valid, found)
        }
        guard client.id == device.clientID else {
            throw OAuthHTTPError(.forbidden, .unauthorizedClient, "a device logs in only to the app it was activated for")
        }
        // Codes without a browser redirect, as the native login gives: for clients registered for it.
        guard client.nativeLogin else {
            throw OAuthHTTPError(.forbidden, .unauthorizedClient, "this client is not registered for the native login (nor device login)")
        }
        if authorization.prompt.contains("none") {
            throw OAuthHTTPError(.badRequest, .loginRequired, "prompt=none cannot be used with a device login")
        }
        if authorization.instanceID != nil {
            throw OAuthHTTPError.invalidRequest("an instance id is activated with a login by password, not by a device that is activated already")
        }
        let transaction = fields[Self.transactionField]
        if let transaction, transaction.isEmpty || transaction.count > Self.maximumTransactionLength {
            throw OAuthHTTPError.invalidRequest("\(Self.transactionField) must be 1 to \(Self.maximumTransactionLength) characters")
        }
        guard let user = try await users.user(id: device.userID), !user.locked else {
            throw OAuthHTTPError(.forbidden, .accessDenied, "the device's user is locked or gone")
        }
        let lifetime = authenticatorPolicy.requestLifetime
        let start = LoginStart.device(userID: device.userID, userStamp: user.securityStamp, instanceID: device.instanceID)
        let session = LoginFlow.begin(
            start, id: SecretDigest.hex(server.random.token()), request: authorization, now: server.now(), lifetime: lifetime)
        var required = authorization
        required.minimumACR = client.minimumACR
        let uafRequest = try await operations.authenticationRequest(
            device: device, client: client, purpose: .login, loginSession: session.id, transactionText: transaction,
            twoFactors: required.requiresTwoFactors,
            user: user)
        try await logins.insertLoginSession(session)
        return JSONResponse.make(DeviceLoginStart(uafRequest: uafRequest, expiresIn: Int(lifetime)), status: .created)
    }

    func finish(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let device = try await devices.require(request, context: context).record
        guard let client = try await clients.client(id: device.clientID) else {
            throw OAuthHTTPError(.unauthorized, .invalidClient, "the device's client is no longer registered")
        }
        let data = try await raw(request)
        let proved = try await operations.authenticate(data, device: device, client: client, purposes: [.login])
        guard let sessionID = proved.serverData.loginSession,
            case .live(let current, _) = try await loginSessions.load(id: sessionID, channel: .device)
        else {
            throw OAuthHTTPError(.badRequest, .invalidGrant, "the device login expired or was finished already; start again")
        }
        let context = LoginContext(address: context.sourceAddress, clientName: client.name, browserSessionID: nil)
        switch try await runner.deviceAssertionVerified(proved, on: current, context: context) {
        case .finished(let finished):
            return JSONResponse.make(NativeLoginAnswer(finished: finished, issuer: server.issuer))
        case .conflict:
            throw OAuthHTTPError(.conflict, .invalidGrant, "the device login was finished by another request")
        case .abandoned(let reason, _), .refused(let reason, _):
            throw Self.error(for: reason)
        case .show:
            throw OAuthHTTPError(.badRequest, .invalidRequest, "the device login is not finished")
        }
    }

    /// What the app is told when the flow will not finish a verified assertion.
    static func error(for reason: LoginRefusal) -> OAuthHTTPError {
        switch reason {
        case .accountChanged: return OAuthHTTPError(.forbidden, .accessDenied, "the user was locked or given a new password during the login")
        case .noSecondFactor:
            return OAuthHTTPError(
                .forbidden, .insufficientUserAuthentication,
                "this login needs two factors and the authenticator was registered after a one-factor login; register it after a two-factor login")
        case .wrongUser:
            return OAuthHTTPError(.forbidden, .accessDenied, "the login was started for another user or device (id_token_hint, or the device)")
        case .wrongStep: return OAuthHTTPError(.conflict, .invalidGrant, "the device login is not waiting for an assertion; start again")
        default: return OAuthHTTPError(.forbidden, .accessDenied, "the device login cannot finish; start again")
        }
    }

    /// The body member that carries a transaction text to confirm (`text/plain`).
    static let transactionField = "transaction_text"

    private func raw(_ request: Request) async throws -> Data {
        try await JSONRequestBody.data(request, limit: maxBodySize)
    }

    private func body<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        do { return try JSONDecoder().decode(T.self, from: try await raw(request)) } catch let error as OAuthHTTPError { throw error } catch {
            throw OAuthHTTPError.invalidRequest("the body must be a JSON object of string members (the /authorize parameters)")
        }
    }
}

/// The answer of `/login/device/start`: the UAF request to answer within `expires_in` seconds.
struct DeviceLoginStart: Encodable, Sendable {
    let uafRequest: UAFReturnRequest
    let expiresIn: Int

    enum CodingKeys: String, CodingKey {
        case uafRequest = "uaf_request"
        case expiresIn = "expires_in"
    }
}
