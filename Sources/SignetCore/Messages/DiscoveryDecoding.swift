// Reading a provider's metadata leniently (OpenID Connect Discovery 1.0 §3), for the SDK and the kit.
import Foundation

/// Reads provider metadata leniently, filling members a provider may omit with their defaults.
///
/// ``DiscoveryDocument`` declares every member, but OIDC Discovery §3 makes most
/// optional; a provider other than Signet may leave them out. The members the SDK and the kit
/// cannot work without must be present.
public enum DiscoveryDecoding {
    /// Members the SDK and the kit need: Discovery §3 REQUIRED plus jwks_uri and token_endpoint, which the code flow needs.
    public static let required = ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"]

    /// The defaults of OIDC Discovery §3, RFC 8414 §2 and RFC 9207 §3 for members left out.
    /// An endpoint left out is the empty string: the provider does not offer it.
    public static var defaults: [String: Any] {
        [
            "userinfo_endpoint": "",
            "revocation_endpoint": "",
            "end_session_endpoint": "",
            "scopes_supported": ["openid"],
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "fragment"],
            "grant_types_supported": ["authorization_code", "implicit"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "token_endpoint_auth_signing_alg_values_supported": [String](),
            "revocation_endpoint_auth_methods_supported": ["client_secret_basic"],
            "code_challenge_methods_supported": [String](),
            "claims_supported": [String](),
            "prompt_values_supported": [String](),
            "acr_values_supported": [String](),
            "ui_locales_supported": [String](),
            "authorization_response_iss_parameter_supported": false,
            "claims_parameter_supported": false,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": true,
        ]
    }

    /// The document in `data`, with the defaults filled in.
    ///
    /// - Throws: `malformed_message` when it is not a JSON object, lacks a required member, or has a member of the wrong type.
    public static func decode(_ data: Data) throws -> DiscoveryDocument {
        guard let object = try? JSONSerialization.jsonObject(with: data), var members = object as? [String: Any] else {
            throw SignetError(.malformedMessage, "the discovery document is not a JSON object")
        }
        for name in required where !(members[name] is String) {
            throw SignetError(.malformedMessage, "the discovery document has no \(name)")
        }
        for (name, value) in defaults where members[name] == nil || members[name] is NSNull {
            members[name] = value
        }
        do {
            let filled = try JSONSerialization.data(withJSONObject: members)
            return try JSONDecoder().decode(DiscoveryDocument.self, from: filled)
        } catch {
            throw SignetError(.malformedMessage, "the discovery document has a member of the wrong type")
        }
    }
}
