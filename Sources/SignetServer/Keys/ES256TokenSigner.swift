// Signs the provider's tokens: JWS compact serialization with ES256 (RFC 7515 §7.1, RFC 7518 §3.4).
import Crypto
import Foundation
import JWTKit
import SignetCore

/// One signing key with its `kid`, making compact JWS tokens with ES256.
///
/// By hand over swift-crypto rather than through jwt-kit's `JWTKeyCollection.sign`: jwt-kit
/// builds a new `JSONEncoder` and JSON-encodes the same header for every token, which measured
/// about a tenth of a token request's instructions (two tokens a request). The header here is
/// encoded once per `typ`; the claims are written member by member when they can be
/// (``JSONObjectWritable``), else through one shared `JSONEncoder` with jwt-kit's own settings; the signature is the same 64-byte `r || s` that jwt-kit (and RFC 7518 §3.4) uses.
/// Verification stays with jwt-kit.
struct ES256TokenSigner: Sendable {
    let kid: String
    private let key: P256.Signing.PrivateKey
    /// The base64url header for each `typ` in use (`JWT`, `at+jwt`, …), made on first use.
    private var headers: [String: String] = [:]

    init(kid: String, key: P256.Signing.PrivateKey) {
        self.kid = kid
        self.key = key
    }

    /// The encoder of headers and claims, set as jwt-kit's `defaultForJWT` (dates as seconds since 1970).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    private struct Header: Encodable {
        let alg = "ES256"
        let kid: String
        let typ: String
    }

    /// The signer with the header for `type` made, if it was not yet.
    func preparing(type: String) throws -> ES256TokenSigner {
        guard headers[type] == nil else { return self }
        var prepared = self
        prepared.headers[type] = try Self.encoder.encode(Header(kid: kid, typ: type)).base64URLEncodedString()
        return prepared
    }

    /// `claims` signed, with `typ` = `type` in the header; the header must have been prepared.
    func sign(_ claims: some JWTPayload, type: String) throws -> String {
        try sign(encodedClaims: try Self.encoder.encode(claims).base64URLEncodedString(), type: type)
    }

    /// The same for the claims of the token endpoint, written without `Codable` (``JSONObjectWritable``).
    func sign(_ claims: some JWTPayload & JSONObjectWritable, type: String) throws -> String {
        try sign(encodedClaims: claims.jsonBytes().base64URLEncodedString(), type: type)
    }

    private func sign(encodedClaims: String, type: String) throws -> String {
        guard let header = headers[type] else { throw SignetError(.keyFailure, "no header prepared for typ \(type)") }
        let signingInput = header + "." + encodedClaims
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + signature.rawRepresentation.base64URLEncodedString()
    }
}
