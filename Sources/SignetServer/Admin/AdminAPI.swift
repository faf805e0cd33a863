// The admin API on the admin listener: clients (RFC 7591/7592 shapes), users, keys and the audit trail.
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetStore

/// JSON over HTTP for what `signet clients|users|keys|audit` do, behind a bearer token
/// (docs/admin-api.openapi.yaml describes it). Every change is an `admin` audit event.
struct AdminAPI: Sendable {
    let admin: SignetAdmin
    let configuration: SignetConfiguration
    static let maxBody = 256 * 1024

    func register(on router: Router<BasicRequestContext>, token: String) {
        let api = router.group("admin").add(middleware: AdminTokenMiddleware(expected: token))
        api.get("clients") { _, _ in try await Self.json(admin.store.listClients().map(ClientMetadata.init)) }
        api.post("clients") { request, _ in try await addClient(request) }
        api.get("clients/:client_id") { _, context in
            guard let client = try await admin.store.client(id: context.parameters.require("client_id")) else { throw AdminError.notFound("client") }
            return Self.json(ClientMetadata(client))
        }
        api.put("clients/:client_id") { request, context in try await replaceClient(request, id: try context.parameters.require("client_id")) }
        api.delete("clients/:client_id") { _, context in
            try await run { try await admin.removeClient(id: context.parameters.require("client_id")) }
            return Response(status: .noContent)
        }
        api.get("users") { _, _ in try await Self.json(admin.store.listUsers().map(UserView.init)) }
        api.post("users") { request, _ in try await addUser(request) }
        api.get("users/:username") { _, context in
            guard let user = try await admin.store.user(username: context.parameters.require("username").lowercased()) else {
                throw AdminError.notFound("user")
            }
            return Self.json(UserView(user))
        }
        api.patch("users/:username") { request, context in try await updateUser(request, username: try context.parameters.require("username")) }
        api.delete("users/:username") { _, context in
            try await run { try await admin.removeUser(username: context.parameters.require("username")) }
            return Response(status: .noContent)
        }
        api.get("keys") { _, _ in try await Self.json(admin.store.signingKeys().map(KeyView.init)) }
        api.post("keys/rotate") { _, _ in
            let kid = try await run { try await admin.rotateKeys(configuration: configuration) }
            return Self.json(["signing_kid": kid])
        }
        api.get("audit") { request, _ in try await audit(request) }
        router.get("admin/openapi.yaml") { _, _ in OpenAPIDocument.admin.response() }
    }

    /// RFC 7591 §3: 201 with the metadata and, for a secret method, the secret (shown once).
    private func addClient(_ request: Request) async throws -> Response {
        let metadata = try ClientMetadata.decode(try await Self.body(request))
        let new = try metadata.newClient()
        let (record, secret) = try await run { try await admin.addClient(new) }
        var answer = ClientMetadata(record)
        answer.clientSecret = secret
        return Self.json(answer, status: .created)
    }

    /// RFC 7592 §2.2: the whole registration is replaced; `client_id` in the body must match the path.
    private func replaceClient(_ request: Request, id: String) async throws -> Response {
        let metadata = try ClientMetadata.decode(try await Self.body(request))
        if let named = metadata.clientID, named != id { throw AdminError.clientMetadata("client_id in the body must be the client's own") }
        // RFC 7592 §2.2 drops what the body leaves out. Nothing protective is dropped by omission:
        // the method must be stated, and so must any protection the client has now, to keep or end it.
        guard metadata.tokenEndpointAuthMethod != nil else {
            throw AdminError.clientMetadata("token_endpoint_auth_method must be stated when a registration is replaced")
        }
        if let stored = try await admin.store.client(id: id) {
            let unstated = [
                (stored.fapi2 && metadata.signetFAPI2 == nil, "signet_fapi2"),
                (stored.requireDPoP && metadata.dpopBoundAccessTokens == nil, "dpop_bound_access_tokens"),
                (
                    stored.requirePushedAuthorizationRequests && metadata.requirePushedAuthorizationRequests == nil,
                    "require_pushed_authorization_requests"
                ),
                (stored.requireSignedRequestObject && metadata.requireSignedRequestObject == nil, "require_signed_request_object"),
                (stored.minimumACR != nil && metadata.signetMinimumACR == nil, "signet_minimum_acr"),
            ].filter(\.0).map(\.1)
            if !unstated.isEmpty {
                throw AdminError.clientMetadata("the client has \(unstated.joined(separator: ", ")): state each to keep or end it")
            }
        }
        let (record, secret) = try await run { try await admin.replaceClient(try metadata.newClient(id: id)) }
        var answer = ClientMetadata(record)
        answer.clientSecret = secret
        return Self.json(answer)
    }

    private func addUser(_ request: Request) async throws -> Response {
        let body = try Self.decode(UserViewChange.self, try await Self.body(request))
        guard let username = body.username, let password = body.password else {
            throw AdminError.invalidRequest("username and password are required")
        }
        let user = try await run(users: true) {
            try await admin.addUser(username: username, password: password, name: body.name, email: body.email, phoneNumber: body.phoneNumber)
        }
        return Self.json(UserView(user), status: .created)
    }

    /// Changes the profile, the password or the lock; each a separate audited change.
    private func updateUser(_ request: Request, username: String) async throws -> Response {
        let body = try Self.decode(UserViewChange.self, try await Self.body(request))
        guard body.username == nil else { throw AdminError.invalidRequest("a username cannot be changed") }
        guard try await admin.store.user(username: username.lowercased()) != nil else { throw AdminError.notFound("user") }
        // Everything is checked before anything is changed: a refused request changes nothing.
        let profile = SignetAdmin.UserChange(name: body.name, email: body.email, phoneNumber: body.phoneNumber)
        do { try SignetAdmin.checkUserChange(profile) } catch let error as SignetError { throw AdminError.invalidRequest(error.reason) }
        if let password = body.password, !PasswordHasher.isAcceptable(password) { throw AdminError.invalidRequest("a password is 1–72 bytes") }
        try await run(users: true) {
            if body.name != nil || body.email != nil || body.phoneNumber != nil {
                try await admin.updateUser(username: username, .init(name: body.name, email: body.email, phoneNumber: body.phoneNumber))
            }
            if let password = body.password { try await admin.setPassword(username: username, password: password) }
            if let locked = body.locked { try await admin.setLocked(username: username, locked) }
        }
        guard let user = try await admin.store.user(username: username.lowercased()) else { throw AdminError.notFound("user") }
        return Self.json(UserView(user))
    }

    private func audit(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        var audit = AuditQuery(clientID: query["client"].map(String.init), limit: 100)
        if let limit = query["limit"] {
            guard let value = Int(limit), (1...10_000).contains(value) else { throw AdminError.invalidRequest("limit must be 1–10000") }
            audit.limit = value
        }
        if let since = query["since"] {
            guard let date = try? Date(String(since), strategy: .iso8601) else { throw AdminError.invalidRequest("since must be an ISO 8601 time") }
            audit.since = date
        }
        if let username = query["user"] {
            guard let user = try await admin.store.user(username: String(username).lowercased()) else { throw AdminError.notFound("user") }
            audit.userID = user.id
        }
        return Self.json(try await admin.store.auditEvents(audit).map(AdminAuditEvent.init))
    }

    /// Runs an admin change, turning its errors into the API's (`invalid_request` for users,
    /// `invalid_client_metadata` for clients, RFC 7591 §3.2.2).
    private func run<T: Sendable>(users: Bool = false, _ change: () async throws -> T) async throws -> T {
        do {
            return try await change()
        } catch let error as SignetError {
            switch error.code {
            case .notFound: throw APIError(.notFound, "not_found", error.reason)
            case .conflict: throw APIError(.conflict, "conflict", error.reason)
            case .invalidConfiguration:
                // Redirect URIs are checked first (ClientMetadata), so what is left is metadata.
                throw users ? AdminError.invalidRequest(error.reason) : AdminError.clientMetadata(error.reason)
            default: throw error
            }
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    /// A JSON answer with ISO 8601 times, never cached.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        JSONResponse.make(value, status: status, encoder: encoder)
    }

    static func body(_ request: Request) async throws -> Data {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw APIError(.unsupportedMediaType, "invalid_request", "send application/json")
        }
        do { return try await JSONRequestBody.read(request, limit: maxBody) } catch let refusal as JSONRequestBody.Refusal {
            var error = refusal.apiError
            error.body.retryable = nil
            throw error
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do { return try JSONDecoder().decode(type, from: data) } catch {
            throw AdminError.invalidRequest("the body is not valid: \(ClientMetadata.describe(error))")
        }
    }
}

/// Refuses requests without the admin bearer token; compares in constant time.
struct AdminTokenMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let expectedDigest: SHA256.Digest

    init(expected: String) { expectedDigest = SHA256.hash(data: Data(expected.utf8)) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            var error = APIError(.unauthorized, "invalid_request", "the admin API needs Authorization: Bearer <admin token>")
            error.headers = [.wwwAuthenticate: #"Bearer realm="signet-admin""#]
            throw error
        }
        // Digests of equal length, compared without an early exit: the time says nothing about the token.
        let given = SHA256.hash(data: Data(header.dropFirst(7).utf8))
        guard ConstantTime.equals(Array(given), Array(expectedDigest)) else {
            var error = APIError(.unauthorized, "invalid_token", "the admin token is wrong")
            error.headers = [.wwwAuthenticate: #"Bearer realm="signet-admin", error="invalid_token""#]
            throw error
        }
        return try await next(request, context)
    }
}

/// An admin API error: a status and RFC 7591 §3.2.2's body.
/// The admin API's errors (``APIError``; never `retryable`: an administrator's request is wrong or not).
enum AdminError {
    static func clientMetadata(_ description: String) -> APIError { APIError(.badRequest, "invalid_client_metadata", description) }
    static func invalidRequest(_ description: String) -> APIError { APIError(.badRequest, "invalid_request", description) }
    static func notFound(_ what: String) -> APIError { APIError(.notFound, "not_found", "no such \(what)") }
}

/// A user as the admin API and `signet users … --output json` show it (never the password hash or the security stamp).
public struct UserView: Codable, Sendable {
    public var id: String
    public var username: String
    public var name: String?
    public var email: String?
    public var phoneNumber: String?
    public var locked: Bool
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, username, name, email, phoneNumber = "phone_number", locked, createdAt = "created_at"
    }

    public init(_ user: UserRecord) {
        (id, username, name, email, phoneNumber, locked, createdAt) = (
            user.id, user.username, user.name, user.email, user.phoneNumber, user.locked, user.createdAt
        )
    }
}

/// The body of `POST /admin/users` and `PATCH /admin/users/{username}`.
struct UserViewChange: Decodable, Sendable {
    var username: String?
    var password: String?
    var name: String?
    var email: String?
    var phoneNumber: String?
    var locked: Bool?

    enum CodingKeys: String, CodingKey {
        case username, password, name, email, phoneNumber = "phone_number", locked
    }
}

/// A signing key as the admin API and `signet keys list --output json` show it (public facts only).
public struct KeyView: Codable, Sendable {
    public var kid: String
    public var algorithm: String
    public var status: String
    public var createdAt: Date
    public var publishUntil: Date?

    enum CodingKeys: String, CodingKey {
        case kid, algorithm, status, createdAt = "created_at", publishUntil = "publish_until"
    }

    public init(_ key: SigningKeyRecord) {
        (kid, algorithm, status, createdAt, publishUntil) = (key.kid, key.algorithm, key.status.rawValue, key.createdAt, key.publishUntil)
    }
}

/// An audit event as the admin API shows it.
struct AdminAuditEvent: Codable, Sendable {
    var id: String
    var at: Date
    var kind: String
    var userID: String?
    var clientID: String?
    var actor: String
    var target: String?
    var reason: String?

    enum CodingKeys: String, CodingKey {
        case id, at, kind, userID = "user_id", clientID = "client_id", actor, target, reason
    }

    init(_ event: AuditEventRecord) {
        (id, at, kind, userID, clientID, actor, target, reason) = (
            event.id, event.at, event.kind, event.userID, event.clientID, event.actor, event.target, event.reason
        )
    }
}

extension ClientMetadataError: HTTPResponseError {
    /// RFC 7591 §3.2.2: 400 with the error code.
    public var status: HTTPResponse.Status { .badRequest }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        AdminAPI.json(["error": error, "error_description": description], status: status)
    }
}
