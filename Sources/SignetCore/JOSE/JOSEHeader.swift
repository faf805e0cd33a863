// Reading a compact JWS header before any key is trusted.
import Foundation

/// The protected header of a compact JWS — RFC 7515 §4, read without verifying.
///
/// Used to refuse `alg: none`, symmetric algorithms and unknown keys *before*
/// a signature is checked, so no key is ever used with an algorithm it was not made for.
public struct JOSEHeader: Sendable, Equatable, Decodable {
    /// alg — RFC 7515 §4.1.1
    public var alg: String
    /// kid — RFC 7515 §4.1.4
    public var kid: String?
    /// typ — RFC 7515 §4.1.9
    public var typ: String?

    /// The header of a compact JWS, or `nil` when ``CompactJWT/parse(_:)`` refuses the token
    /// (not three base64url parts, a header or claims set that is not one JSON object, a repeated member name).
    public init?(compact token: String) {
        guard case .success(let jwt) = CompactJWT.parse(token) else { return nil }
        self = jwt.header
    }

    /// The asymmetric algorithms Signet accepts on anything it verifies.
    public static let acceptedAlgorithms: Set<String> = ["ES256", "ES384", "RS256", "PS256", "EdDSA"]

    /// The accepted algorithms a key of type `kty` (and curve `crv`) can sign with — RFC 7518 §3.1,
    /// RFC 8037 §3.1. A key is used only with these, so a header cannot make a key of one kind
    /// verify under another algorithm (RFC 8725 §3.1).
    public static func algorithms(keyType kty: String?, curve crv: String?) -> Set<String> {
        switch (kty, crv) {
        case ("EC", "P-256"): return ["ES256"]
        case ("EC", "P-384"): return ["ES384"]
        case ("RSA", _): return ["RS256", "PS256"]
        case ("OKP", "Ed25519"): return ["EdDSA"]
        default: return []
        }
    }
}

extension JOSEHeader: JSONObjectReadable {
    public init(members: JSONObjectMembers) throws(JSONObjectMembers.Unplain) {
        alg = try members.string("alg")
        kid = try members.stringIfPresent("kid")
        typ = try members.stringIfPresent("typ")
    }
}
