// The UserInfo endpoint (OIDC Core §5.3).
import Foundation
import SignetCore

/// A JSON value, for claims whose shape the kit does not know in advance.
///
/// UserInfo may return any claim (OIDC Core §5.1, §5.1.2), so the kit keeps them as JSON.
public enum JSONValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; JSON does not tell integers apart.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

/// The claims the UserInfo endpoint returned — OIDC Core §5.3.2.
public struct UserInfo: Sendable, Equatable {
    /// sub — OIDC Core §5.3.2; always present, and equal to the ID token's `sub`.
    public var sub: String
    /// Every claim returned, `sub` included.
    public var claims: [String: JSONValue]

    /// UserInfo for `sub` with `claims`.
    public init(sub: String, claims: [String: JSONValue]) {
        self.sub = sub
        self.claims = claims
    }

    /// The claim `name`, e.g. `email` or `phone_number` (OIDC Core §5.1).
    public subscript(name: String) -> JSONValue? { claims[name] }
}

extension RelyingParty {
    /// The user's claims from the UserInfo endpoint — OIDC Core §5.3.
    ///
    /// A bearer GET (RFC 6750 §2.1). OIDC Core §5.3.2: the `sub` returned must equal the
    /// ID token's `sub`, or the answer could be about someone else; pass `expectedSubject`
    /// to have that checked. Signed or encrypted UserInfo responses are not supported.
    ///
    /// - Parameters:
    ///   - accessToken: the access token from the token response.
    ///   - expectedSubject: the validated ID token's `sub`, checked against the answer's.
    /// - Throws: `oauth_error` carrying the `WWW-Authenticate` error (RFC 6750 §3.1), e.g.
    ///   `invalid_token` when the token expired; `invalid_token` when `sub` differs;
    ///   `invalid_configuration` when the provider has no UserInfo endpoint.
    public func userInfo(accessToken: String, expectedSubject: String? = nil) async throws -> UserInfo {
        let document = try await discover()
        let endpoint = try Self.checkedEndpoint(document.userinfoEndpoint, name: "userinfo_endpoint")
        // A DPoP-bound token goes with the DPoP scheme and a proof naming it (RFC 9449 §7).
        let scheme = configuration.dpopKey == nil ? "Bearer " : "DPoP "
        let request = HTTPTransportRequest(
            method: "GET", url: endpoint, headers: [("Authorization", scheme + accessToken), ("Accept", "application/json")])
        let response = try await send(proveKey: true) { request }
        guard response.isSuccess else {
            if let challenge = response.header("WWW-Authenticate"), let oauthError = Self.bearerError(in: challenge) {
                throw SignetError(.oauth, "the UserInfo endpoint refused the token (HTTP \(response.status))", oauthError: oauthError)
            }
            throw Self.failure(of: response, at: "UserInfo endpoint")
        }
        if let type = response.header("Content-Type"), type.lowercased().hasPrefix("application/jwt") {
            throw SignetError(.malformedMessage, "signed or encrypted UserInfo responses are not supported")
        }
        guard let claims = try? JSONDecoder().decode([String: JSONValue].self, from: response.body),
            let sub = claims["sub"]?.stringValue, !sub.isEmpty
        else { throw SignetError(.malformedMessage, "the UserInfo response is not a JSON object with a sub") }
        if let expectedSubject, sub != expectedSubject {
            throw SignetError(.invalidToken, "the UserInfo sub is not the ID token's sub (OIDC Core §5.3.2)")
        }
        return UserInfo(sub: sub, claims: claims)
    }

    /// The `error` and `error_description` of a Bearer or DPoP challenge — RFC 6750 §3, RFC 9449 §7.1.
    static func bearerError(in challenge: String) -> OAuthError? {
        AuthenticationChallenge(challenge)?.oauthError
    }
}
