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

    /// The header of a compact JWS, or `nil` when it is not three base64url parts with a JSON header.
    public init?(compact token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }),
            let data = Data(base64URLEncoded: String(parts[0])),
            let header = try? JSONDecoder().decode(JOSEHeader.self, from: data)
        else { return nil }
        self = header
    }

    /// The asymmetric algorithms Signet accepts on anything it verifies.
    public static let acceptedAlgorithms: Set<String> = ["ES256", "ES384", "RS256", "PS256", "EdDSA"]
}
