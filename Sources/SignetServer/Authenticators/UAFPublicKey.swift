// An authenticator's public key in the formats of the FIDO Registry, and the check of its signatures.
import Crypto
import CryptoExtras
import Foundation
import SignetCore
import SwiftASN1

/// A UAuth public key, read from the format its registration declared.
enum UAFPublicKey: Sendable {
    case p256(P256.Signing.PublicKey)
    case rsa(_RSA.Signing.PublicKey)

    /// Reads `bytes` in `format`; `nil` when they are not a key of that format (or an RSA key under 2048 bits).
    init?(_ bytes: [UInt8], format: UAFPublicKeyFormat) {
        switch format {
        case .eccX962Raw:
            guard bytes.count == 65, bytes.first == 0x04, let key = try? P256.Signing.PublicKey(x963Representation: bytes) else { return nil }
            self = .p256(key)
        case .eccX962DER:
            guard let key = try? P256.Signing.PublicKey(derRepresentation: bytes) else { return nil }
            self = .p256(key)
        case .rsa2048Raw:
            // The 256-byte modulus, then the 4-byte public exponent, both big-endian.
            guard bytes.count == 260, let key = try? _RSA.Signing.PublicKey(n: bytes[0..<256], e: bytes[256..<260]), key.keySizeInBits >= 2048 else { return nil }
            self = .rsa(key)
        case .rsa2048DER:
            guard let key = try? _RSA.Signing.PublicKey(derRepresentation: bytes) else { return nil }
            self = .rsa(key)
        default:
            return nil
        }
    }

    /// Whether `algorithm` is one this key can verify (ECDSA for EC keys, RSA for RSA keys).
    func fits(_ algorithm: UAFSignatureAlgorithm) -> Bool {
        switch self {
        case .p256: return algorithm == .secp256r1ECDSASHA256Raw || algorithm == .secp256r1ECDSASHA256DER
        case .rsa: return algorithm.isRSA
        }
    }

    /// Whether `signature`, encoded as `algorithm` says, signs exactly `data`.
    func isValid(_ signature: [UInt8], algorithm: UAFSignatureAlgorithm, for data: [UInt8]) -> Bool {
        switch (self, algorithm) {
        case (.p256(let key), .secp256r1ECDSASHA256Raw):
            guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case (.p256(let key), .secp256r1ECDSASHA256DER):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case (.rsa(let key), .rsaEMSAPKCS1SHA256Raw):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
        case (.rsa(let key), .rsaEMSAPKCS1SHA256DER):
            // A DER OCTET STRING holding the signature (FIDO Registry §3.6.1).
            guard let octets = try? ASN1OctetString(derEncoded: signature) else { return false }
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: Array(octets.bytes)), for: data, padding: .insecurePKCS1v1_5)
        default:
            return false
        }
    }
}
