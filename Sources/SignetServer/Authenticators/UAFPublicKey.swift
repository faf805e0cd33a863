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
            guard let (modulus, exponent) = Self.rawRSA(bytes), let key = try? _RSA.Signing.PublicKey(n: modulus, e: exponent),
                key.keySizeInBits >= 2048
            else { return nil }
            self = .rsa(key)
        case .rsa2048DER:
            guard let key = try? _RSA.Signing.PublicKey(derRepresentation: bytes) else { return nil }
            self = .rsa(key)
        default:
            return nil
        }
    }

    /// The most bytes an `ALG_KEY_RSA_2048_RAW` exponent may take, leading zeros included.
    static let maximumRawExponentBytes = 8

    /// The modulus and exponent of an `ALG_KEY_RSA_2048_RAW` key (FIDO Registry §3.6.2): the
    /// 256-byte modulus, then the public exponent in the bytes that remain ("N − 256"), both
    /// big-endian, so the usual e = 65537 takes 3 (259 in all) and a 4-byte field 260. `nil`
    /// unless the exponent is there, at most ``maximumRawExponentBytes`` long, and a usable RSA
    /// exponent: odd, above 1, of at most 32 bits (RFC 8017 §3.1).
    static func rawRSA(_ bytes: [UInt8]) -> (modulus: ArraySlice<UInt8>, exponent: ArraySlice<UInt8>)? {
        guard bytes.count > 256, bytes.count - 256 <= maximumRawExponentBytes else { return nil }
        let exponent = bytes[256...].drop { $0 == 0 }
        guard let last = exponent.last, last & 1 == 1, exponent.count <= 4, exponent.count > 1 || last > 1 else { return nil }
        return (bytes[0..<256], exponent)
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
        case (.rsa(let key), .rsaSSAPSSSHA256Raw):
            // The raw signature, as long as the modulus; MGF1 with SHA-256 and a 32-byte salt
            // (FIDO Registry §3.6.1, RFC 4055's defaults).
            guard signature.count == key.keySizeInBits / 8 else { return false }
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .PSS)
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
