// The signature algorithms and public-key formats of the FIDO Registry of Predefined Values.

/// A signature algorithm and encoding (FIDO Registry §3.6.1, `ALG_SIGN_*`).
public struct UAFSignatureAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// ECDSA on P-256 with SHA-256, `r || s` (64 bytes).
    public static let secp256r1ECDSASHA256Raw = UAFSignatureAlgorithm(rawValue: 0x0001)
    /// ECDSA on P-256 with SHA-256, DER `Ecdsa-Sig-Value`.
    public static let secp256r1ECDSASHA256DER = UAFSignatureAlgorithm(rawValue: 0x0002)
    /// RSASSA-PSS with SHA-256 (MGF1 SHA-256, 32-byte salt), the signature as its big-endian
    /// bytes (`ALG_SIGN_RSASSA_PSS_SHA256_RAW`).
    public static let rsaSSAPSSSHA256Raw = UAFSignatureAlgorithm(rawValue: 0x0003)
    /// RSASSA-PKCS1-v1_5 with SHA-256, the signature as its DER-free big-endian bytes.
    public static let rsaEMSAPKCS1SHA256Raw = UAFSignatureAlgorithm(rawValue: 0x0008)
    /// RSASSA-PKCS1-v1_5 with SHA-256 (`ALG_SIGN_RSA_EMSA_PKCS1_SHA256_DER`).
    public static let rsaEMSAPKCS1SHA256DER = UAFSignatureAlgorithm(rawValue: 0x0009)

    /// The algorithms Signet verifies.
    public static let supported: [UAFSignatureAlgorithm] = [
        .secp256r1ECDSASHA256Raw, .secp256r1ECDSASHA256DER, .rsaSSAPSSSHA256Raw, .rsaEMSAPKCS1SHA256Raw, .rsaEMSAPKCS1SHA256DER,
    ]

    public var isRSA: Bool { self == .rsaSSAPSSSHA256Raw || self == .rsaEMSAPKCS1SHA256Raw || self == .rsaEMSAPKCS1SHA256DER }

    public var description: String {
        switch self {
        case .secp256r1ECDSASHA256Raw: return "ALG_SIGN_SECP256R1_ECDSA_SHA256_RAW"
        case .secp256r1ECDSASHA256DER: return "ALG_SIGN_SECP256R1_ECDSA_SHA256_DER"
        case .rsaSSAPSSSHA256Raw: return "ALG_SIGN_RSASSA_PSS_SHA256_RAW"
        case .rsaEMSAPKCS1SHA256Raw: return "ALG_SIGN_RSA_EMSA_PKCS1_SHA256_RAW"
        case .rsaEMSAPKCS1SHA256DER: return "ALG_SIGN_RSA_EMSA_PKCS1_SHA256_DER"
        default: return "ALG_SIGN 0x\(String(rawValue, radix: 16))"
        }
    }
}

/// A public-key representation format (FIDO Registry §3.6.2, `ALG_KEY_*`).
public struct UAFPublicKeyFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// An uncompressed ANSI X9.62 point (`04 || x || y`, 65 bytes for P-256).
    public static let eccX962Raw = UAFPublicKeyFormat(rawValue: 0x0100)
    /// A DER SubjectPublicKeyInfo of an EC key (RFC 5480).
    public static let eccX962DER = UAFPublicKeyFormat(rawValue: 0x0101)
    /// A 2048-bit RSA key: the 256-byte modulus, then the exponent in the bytes that remain
    /// (three for 65537), big-endian.
    public static let rsa2048Raw = UAFPublicKeyFormat(rawValue: 0x0102)
    /// A DER RSA public key (PKCS#1 `RSAPublicKey` or SubjectPublicKeyInfo).
    public static let rsa2048DER = UAFPublicKeyFormat(rawValue: 0x0103)

    public static let supported: [UAFPublicKeyFormat] = [.eccX962Raw, .eccX962DER, .rsa2048Raw, .rsa2048DER]

    public var isRSA: Bool { self == .rsa2048Raw || self == .rsa2048DER }

    public var description: String {
        switch self {
        case .eccX962Raw: return "ALG_KEY_ECC_X962_RAW"
        case .eccX962DER: return "ALG_KEY_ECC_X962_DER"
        case .rsa2048Raw: return "ALG_KEY_RSA_2048_RAW"
        case .rsa2048DER: return "ALG_KEY_RSA_2048_DER"
        default: return "ALG_KEY 0x\(String(rawValue, radix: 16))"
        }
    }
}

/// `AuthenticationMode` of `TAG_ASSERTION_INFO` (Authenticator Commands §5.2.1).
public enum UAFAuthenticationMode: UInt8, Sendable {
    /// The user was verified; no transaction content was shown.
    case userVerified = 0x01
    /// The user was verified and confirmed the transaction content shown.
    case transactionConfirmed = 0x02
}
