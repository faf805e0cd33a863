// The FAPI 2.0 Security Profile (OpenID Foundation, final, February 2025) for clients flagged `fapi2`.
import Foundation
import SignetCore
import SignetStore

/// What the `fapi2` flag of a client turns on.
///
/// Every rule of the FAPI 2.0 Security Profile that binds an authorization server is either
/// enforced for every client already or turned on here; `docs/fapi2.md` lists them one per line
/// with their section. The flag adds to a client's own switches (`require_pushed_authorization_requests`,
/// `dpop_bound_access_tokens`), it never loosens one.
public enum FAPI2Profile {
    /// §5.4: JWTs are signed with PS256, ES256 or EdDSA (Ed25519) only — client assertions,
    /// request objects and DPoP proofs of a FAPI 2.0 client.
    public static let algorithms: Set<String> = ["PS256", "ES256", "EdDSA"]

    /// Why `client` cannot be registered (or changed) as a FAPI 2.0 client; empty when it can.
    ///
    /// - §5.3.2.1: clients authenticate with `private_key_jwt` (MTLS client authentication
    ///   comes with the device issue); so a FAPI 2.0 client is confidential.
    /// - §5.3.2.2: no authorization response over an unencrypted connection: https redirect
    ///   URIs only (the loopback exception is for native public clients, which FAPI 2.0 excludes).
    public static func registrationProblems(_ client: ClientRecord) -> [String] {
        guard client.fapi2 else { return [] }
        var problems: [String] = []
        if client.authMethod != .privateKeyJWT {
            problems.append("a FAPI 2.0 client must authenticate with private_key_jwt (FAPI 2.0 §5.3.2.1), not \(client.authMethod.rawValue)")
        }
        for uri in client.redirectURIs where URLComponents(string: uri)?.scheme?.lowercased() != "https" {
            problems.append("a FAPI 2.0 client's redirect URIs must be https (FAPI 2.0 §5.3.2.2): \(uri)")
        }
        return problems
    }

    /// The JWS algorithms `client` may sign with (assertions, request objects, DPoP proofs).
    public static func algorithms(for client: ClientRecord) -> Set<String> {
        client.fapi2 ? algorithms : JOSEHeader.acceptedAlgorithms
    }

    /// The values a client assertion's `aud` may take for `client`: FAPI 2.0 §5.3.2.1 has the
    /// issuer identifier, as a string, and nothing else; other clients may also name the
    /// endpoint they call (RFC 7523 §3).
    static func assertionAudiences(for client: ClientRecord, issuer: String, endpoints: [String]) -> [String] {
        client.fapi2 ? [issuer] : [issuer] + endpoints
    }

    /// Throws 400 `invalid_dpop_proof` when `proof` is signed with an algorithm the profile does
    /// not allow (§5.4) or, when it is `required` (at the token endpoint), when `client` must
    /// prove a DPoP key and sent no proof (§5.3.2.1: only sender-constrained access tokens).
    static func checkProof(_ proof: DPoPProof?, client: ClientRecord, required: Bool = true) throws {
        if proof == nil, required, client.mustUseDPoP { throw OAuthHTTPError(.badRequest, .invalidDPoPProof, "this client must send a DPoP proof") }
        if let proof, !algorithms(for: client).contains(proof.alg) {
            throw OAuthHTTPError(.badRequest, .invalidDPoPProof, "this client's DPoP proofs must use PS256, ES256 or EdDSA (FAPI 2.0)")
        }
    }
}

extension ClientRecord {
    /// Whether the client's authorization requests must come through `/par`: its own switch or FAPI 2.0 (§5.3.2.2).
    public var mustPushRequests: Bool { requirePushedAuthorizationRequests || fapi2 }

    /// Whether every token request must carry a DPoP proof: its own switch or FAPI 2.0 (§5.3.2.1:
    /// only sender-constrained access tokens).
    public var mustUseDPoP: Bool { requireDPoP || fapi2 }

    /// Whether a refresh spends the refresh token and issues a new one. FAPI 2.0 §5.3.2.1 asks
    /// servers not to rotate (a client that missed the answer must be able to retry), so a FAPI
    /// 2.0 client keeps its refresh token; it is bound to the client's authentication instead.
    public var rotatesRefreshTokens: Bool { !fapi2 }
}
