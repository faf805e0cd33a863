// Signed request objects by value — JWT-Secured Authorization Requests, RFC 9101.
import Foundation
import SignetCore
import SignetStore

/// Reads the `request` parameter: a JWT the client signed with a key it registered, whose
/// claims are the authorization request's parameters.
///
/// Only the request object's parameters count (RFC 9101 §6.3): parameters sent beside it
/// (a `state`, a `redirect_uri`) are ignored, never merged; `client_id` beside it must name the
/// client that signed it. The object must be signed with an asymmetric algorithm, carry
/// `iss` = client, `aud` = issuer, `exp` at most an hour ahead, `nbf` at most an hour old, and a
/// `jti` that is used once.
struct RequestObjectReader: Sendable {
    let server: ServerContext
    let clients: any ClientStore
    /// Where each request object's `jti` is recorded, so it is used once.
    let replays: any ReplayStore
    let clockSkew: TimeInterval
    let verifier: ClientJWTVerifier

    /// The longest a request object may live (FAPI 2.0 Message Signing §5.3.1: 60 minutes).
    static let maxLifetime: TimeInterval = 3_600
    /// The claims that describe the object rather than the request.
    static let envelopeClaims: Set<String> = ["iss", "aud", "exp", "nbf", "iat", "jti"]

    /// The parameters to go on with, or why the request object cannot be used.
    enum Outcome {
        /// `signed`: they came from a verified request object.
        case parameters(FormParameters, signed: Bool)
        /// Shown to the user, never redirected: nothing in the request is trusted yet.
        case refused(OAuthError)
    }

    func read(_ parameters: FormParameters) async throws -> Outcome {
        guard let object = parameters[OAuthParameter.request] else { return .parameters(parameters, signed: false) }
        if parameters[OAuthParameter.requestURI] != nil {
            return .refused(OAuthError(.invalidRequest, "request and request_uri cannot be sent together"))
        }
        if parameters.duplicatedNames.contains(OAuthParameter.request) || parameters.duplicatedNames.contains(OAuthParameter.clientID) {
            return .refused(OAuthError(.invalidRequest, "client_id and request must appear once"))
        }
        guard let clientID = parameters[OAuthParameter.clientID], !clientID.isEmpty else {
            return .refused(OAuthError(.invalidRequest, "client_id is missing"))
        }
        guard let client = try await clients.client(id: clientID) else { return .refused(OAuthError(.invalidClient, "unknown client_id")) }
        func refuse(_ description: String) -> Outcome { .refused(OAuthError(.invalidRequestObject, description)) }

        guard object.utf8.count <= 16_384 else { return refuse("the request object is too large") }
        let jwt: CompactJWT
        switch CompactJWT.parse(object) {
        case .success(let parsed): jwt = parsed
        case .failure(let refusal): return refuse("the request object is refused: \(refusal)")
        }
        // RFC 9101 §10.8: typ oauth-authz-req+jwt tells a request object from other JWTs signed
        // with the same key (a client assertion must not pass as one, nor one as an assertion).
        guard jwt.header.typ == "oauth-authz-req+jwt" else { return refuse("the request object typ must be oauth-authz-req+jwt") }
        do {
            try await verifier.verify(object, jwt, client: client, what: "the request object")
        } catch let refusal as ClientJWTVerifier.Refusal {
            return refuse(refusal.description)
        }
        guard let claims = try? JSONDecoder().decode([String: ClaimValue].self, from: jwt.claims) else {
            return refuse("the request object's claims are not a JSON object")
        }

        let now = server.now()
        let nowSeconds = now.timeIntervalSince1970
        let skew = clockSkew
        guard claims["iss"]?.string == client.id else { return refuse("the request object's iss must be the client_id") }
        guard claims["aud"]?.singleString == server.issuer else { return refuse("the request object's aud must be the issuer") }
        if let named = claims["client_id"], named.string != client.id { return refuse("the request object's client_id is not the client") }
        guard let exp = claims["exp"]?.seconds, exp > nowSeconds - skew else { return refuse("the request object has expired or has no exp") }
        guard exp <= nowSeconds + Self.maxLifetime + skew else { return refuse("the request object's exp is more than 60 minutes ahead") }
        guard let nbf = claims["nbf"]?.seconds, nbf <= nowSeconds + skew, nbf >= nowSeconds - Self.maxLifetime - skew else {
            return refuse("the request object needs an nbf within the last 60 minutes")
        }
        if let iat = claims["iat"]?.seconds, iat > nowSeconds + skew { return refuse("the request object's iat is in the future") }
        guard let jti = claims["jti"]?.string, !jti.isEmpty, jti.utf8.count <= 256 else { return refuse("the request object has no jti") }
        if claims[OAuthParameter.request] != nil || claims[OAuthParameter.requestURI] != nil {
            return refuse("a request object cannot contain request or request_uri")
        }

        var result = FormParameters()
        for name in claims.keys.sorted() where !Self.envelopeClaims.contains(name) {
            guard let value = claims[name]?.parameterValue else { return refuse("the request object's \(name.prefix(64)) is not a string or number") }
            result.append(name, value)
        }
        if result[OAuthParameter.clientID] == nil { result.append(OAuthParameter.clientID, client.id) }
        // Single use, remembered until it expires.
        let firstUse = try await replays.recordOnce(
            key: "request-object:\(client.id):\(jti)", expiresAt: Date(timeIntervalSince1970: exp + skew), now: now)
        guard firstUse else { return refuse("the request object's jti was already used") }
        return .parameters(result, signed: true)
    }
}

/// A JSON value of a request object's claims set.
enum ClaimValue: Codable, Equatable {
    case string(String), integer(Int64), number(Double), bool(Bool), object([String: ClaimValue]), array([ClaimValue]), null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode([String: ClaimValue].self) {
            self = .object(value)
        } else {
            self = .array(try container.decode([ClaimValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    var string: String? { if case .string(let value) = self { return value } else { return nil } }

    /// A string, or an array holding exactly one string (how `aud` may be written).
    var singleString: String? {
        switch self {
        case .string(let value): return value
        case .array(let values) where values.count == 1: return values[0].string
        default: return nil
        }
    }

    /// A NumericDate (RFC 7519 §2) in seconds.
    var seconds: TimeInterval? {
        switch self {
        case .integer(let value): return TimeInterval(value)
        case .number(let value) where value.isFinite: return value
        default: return nil
        }
    }

    /// As a request parameter: strings as they are, whole numbers and booleans as text, objects
    /// (such as `claims`) as their JSON; `nil` for anything else.
    var parameterValue: String? {
        switch self {
        case .string(let value): return value
        case .integer(let value): return String(value)
        case .bool(let value): return value ? "true" : "false"
        case .object:
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) }
        default: return nil
        }
    }
}
