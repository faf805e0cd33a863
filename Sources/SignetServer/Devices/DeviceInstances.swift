// Instance ids: the identity an app installation gets before it activates (issue 8, step 1).
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// `POST /devices/instances` (form body `client_id`): an app asks for an instance id for its client.
///
/// The id is 256 random bits, lives ``lifetime`` unless activated, and belongs to the client,
/// which must be allowed the scope `device` (`signet clients add|update --scope device`). The
/// user then logs in with it as the `nonce` (or in a `claims` request for `instance_id`) and
/// scope `device`; the grant and the ID token carry it. Ids are counted per client address
/// (IPv6 by /64) in a sliding window, so nobody can fill the table; an id that is activated is
/// given back, so the budget bounds ids asked for and left unused, never activations (a load
/// test or an office behind one address activates as many installations as it logs in).
struct DeviceInstances: Sendable {
    let server: ServerContext
    let clients: any ClientStore
    let devices: any DeviceStore
    /// The per-address budget of new instance ids.
    let limits: any LimitStore
    let maxBodySize: Int

    /// The scope a login must ask for to activate an installation.
    static let scope = "device"
    /// The ID token claim (and `claims` request member) naming the installation.
    static let claim = "instance_id"
    /// How long an instance id waits for its activation.
    static let lifetime: TimeInterval = 600
    /// How many unused instance ids one address may ask for per ``window``.
    static let perAddress = 60
    static let window: TimeInterval = 600

    /// Whether `id` can be an instance id: 43 base64url characters.
    static func isWellFormed(_ id: String) -> Bool {
        id.utf8.count == 43 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    func create(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let clientID = try await Self.clientID(of: request, maxBodySize: maxBodySize)
        let instance = try await makeInstance(clientID: clientID, context: context)
        return JSONResponse.make(InstanceAnswer(instanceID: instance.id, expiresIn: Int(Self.lifetime)), status: .created)
    }

    /// The client, which must exist and be allowed the scope `device`.
    func deviceClient(_ clientID: String) async throws -> ClientRecord {
        guard let client = try await clients.client(id: clientID) else { throw OAuthHTTPError(.unauthorized, .invalidClient, "unknown client_id") }
        guard client.allowedScopes.contains(Self.scope) else {
            throw OAuthHTTPError(.badRequest, .unauthorizedClient, "this client may not activate devices (it lacks the scope device)")
        }
        return client
    }

    /// Makes and stores a new instance id for the client, counted against the address's budget.
    /// - Parameter attest: judges the app's attestation for the new id (initial certificates); its verdict is kept.
    func makeInstance(
        clientID: String, context: SignetRequestContext, attest: ((String) async throws -> AttestationResult)? = nil
    ) async throws -> DeviceInstanceRecord {
        let client = try await deviceClient(clientID)
        let limits = SlidingWindow(store: limits, clock: server.clock)
        if case .spent(let retryAfter) = try await limits.take(Self.budgetKey(context), maximum: Self.perAddress, window: Self.window) {
            let seconds = Int(retryAfter.rounded(.up))
            throw OAuthHTTPError(
                .tooManyRequests, .temporarilyUnavailable, "too many instance ids from this address; retry after \(seconds) s",
                headers: [.retryAfter: String(seconds)])
        }
        let now = server.now()
        var instance = DeviceInstanceRecord(
            id: server.random.token(), clientID: client.id, createdAt: now, expiresAt: now.addingTimeInterval(Self.lifetime))
        instance.budgetKey = Self.budgetKey(context)
        instance.attestation = try await attest?(instance.id).kind
        try await devices.insertDeviceInstance(instance)
        return instance
    }

    /// Gives an activated instance id's use back to the budget it was counted in (the address that
    /// asked for it, whoever activates it), so nobody is refunded for uses they never took.
    func giveBack(_ instance: DeviceInstanceRecord) async {
        guard let key = instance.budgetKey else { return }
        do {
            try await SlidingWindow(store: limits, clock: server.clock).giveBack(key, maximum: Self.perAddress)
        } catch {
            // The activation stands; the address's budget stays charged until the window passes.
            server.logger.warning("an activated instance id's use was not given back", metadata: ["error": .string(String(describing: error))])
        }
    }

    /// The budget an address's instance ids are counted in.
    static func budgetKey(_ context: SignetRequestContext) -> String {
        "device-instances:" + ClientAddress.throttleGroup(context.sourceAddress)
    }

    /// `client_id` from the form body, once (a JSON body is refused as at the OAuth endpoints).
    static func clientID(of request: Request, maxBodySize: Int) async throws -> String {
        let parameters = try await RequestParameters.form(request, maxBodySize: maxBodySize)
        if let repeated = parameters.duplicatedNames.first { throw OAuthHTTPError.invalidRequest("\(repeated.prefix(64)) must not be repeated") }
        guard let id = parameters[OAuthParameter.clientID], !id.isEmpty, id.utf8.count <= 128 else {
            throw OAuthHTTPError.invalidRequest("client_id is missing")
        }
        return id
    }

    /// The answer: `201 {instance_id, expires_in}`.
    struct InstanceAnswer: Encodable {
        let instanceID: String
        let expiresIn: Int
        enum CodingKeys: String, CodingKey {
            case instanceID = "instance_id"
            case expiresIn = "expires_in"
        }
    }
}
