// An incoming JWT taken apart and checked before any key or claim is trusted (RFC 7515 §7.1, RFC 7519 §7.2).
import Foundation

/// A JWT in JWS compact serialization: its header, claims set and signature, checked for shape.
///
/// Every JWT Signet receives (client assertions, `id_token_hint`, its own access tokens, ID
/// tokens at a relying party, and later request objects and DPoP proofs) is read through
/// ``parse(_:)`` before a signature is verified, so one set of structural rules holds for all:
/// three base64url parts, a JOSE header and a claims set that are each one JSON object, and no
/// member name repeated at the top level of either (RFC 7515 §5.2, RFC 7519 §4, RFC 8725 §3.2).
/// The signature itself is checked by the caller, with a key chosen from ``header``.
public struct CompactJWT: Sendable, Equatable {
    /// The JOSE header — RFC 7515 §4.
    public let header: JOSEHeader
    /// The JOSE header's JSON, for members beyond ``JOSEHeader`` (such as a DPoP proof's `jwk`).
    public let headerJSON: Data
    /// The UTF-8 JSON of the claims set, free of repeated names — RFC 7519 §4.
    public let claims: Data
    /// The claims set's members, as the structural check found them (``JSONObjectMembers``).
    public let claimMembers: JSONObjectMembers
    /// The signature bytes — RFC 7515 §7.1.
    public let signature: Data
    /// The token as received.
    public let token: String
    /// How many of the token's UTF-8 bytes are its signing input (header `.` claims).
    let signingInputCount: Int

    /// Calls `body` with the signing input — RFC 7515 §5.2 — over the token's own bytes, so a
    /// signature is checked on what was split once, with no copy.
    public func withSigningInput<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var token = token
        return try token.withUTF8 { try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: $0[..<signingInputCount]))) }
    }

    /// The parts of `token`, or why it is refused.
    public static func parse(_ token: String) -> Result<CompactJWT, Refusal> {
        // Cut at the two `.` bytes of the contiguous UTF-8: splitting the String walks grapheme
        // clusters, a visible cost on every token request.
        var text = token
        let parts = text.withUTF8 { bytes -> (Data, Data, Data, Int)? in
            guard let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
                let secondDot = bytes[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
                !bytes[(secondDot + 1)...].contains(UInt8(ascii: "."))
            else { return nil }
            // Each part non-empty base64url.
            func part(_ range: Range<Int>) -> Data? {
                range.isEmpty ? nil : Base64URL.decode(UnsafeBufferPointer(rebasing: bytes[range])).map { Data($0) }
            }
            guard let header = part(0..<firstDot), let claims = part((firstDot + 1)..<secondDot), let signature = part((secondDot + 1)..<bytes.count)
            else { return nil }
            return (header, claims, signature, secondDot)
        }
        guard case (let headerJSON, let claims, let signature, let signingInputCount)? = parts else { return .failure(.notCompact) }
        let headerMembers: JSONObjectMembers
        switch JSONObjectMembers.scan(headerJSON) {
        case .malformed: return .failure(.malformedHeader)
        case .repeated(let name): return .failure(.repeatedHeaderMember(name))
        // RFC 7515 §4.1.11: no extension is understood here, so a critical one refuses the token.
        case .object(let members) where members.names.contains("crit"): return .failure(.criticalExtension)
        case .object(let members): headerMembers = members
        }
        let claimMembers: JSONObjectMembers
        switch JSONObjectMembers.scan(claims) {
        case .malformed: return .failure(.malformedClaims)
        case .repeated(let name): return .failure(.repeatedClaim(name))
        case .object(let members): claimMembers = members
        }
        guard let header = try? JOSEHeader.decode(headerMembers, fallback: JSONDecoder()) else { return .failure(.malformedHeader) }
        return .success(
            CompactJWT(
                header: header, headerJSON: headerJSON, claims: claims, claimMembers: claimMembers, signature: signature, token: token,
                signingInputCount: signingInputCount))
    }

    /// Why a token was refused before its signature was looked at.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not three non-empty base64url parts.
        case notCompact
        /// The header is not a JSON object with a string `alg`.
        case malformedHeader
        /// The claims set is not a JSON object.
        case malformedClaims
        /// The header names a member twice — RFC 7515 §5.2.
        case repeatedHeaderMember(String)
        /// The claims set names a claim twice — RFC 7519 §4.
        case repeatedClaim(String)
        /// The header names `crit` extensions (RFC 7515 §4.1.11), none of which is understood here.
        case criticalExtension

        /// A short reason for an `error_description`, with the repeated name cut short.
        public var description: String {
            switch self {
            case .notCompact: "it is not a compact JWS"
            case .malformedHeader: "its JOSE header is not a JSON object with an alg"
            case .malformedClaims: "its claims set is not a JSON object"
            case .repeatedHeaderMember(let name): "its JOSE header repeats the member \(name.prefix(32)) (RFC 7515 section 5.2)"
            case .repeatedClaim(let name): "its claims set repeats the claim \(name.prefix(32)) (RFC 7519 section 4)"
            case .criticalExtension: "its JOSE header names crit extensions, which are not supported (RFC 7515 section 4.1.11)"
            }
        }
    }
}
