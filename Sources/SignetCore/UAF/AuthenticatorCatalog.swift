// The FIDO UAF authenticators Signet accepts: the AAIDs of the Nevis table (seed 002).

/// One kind of authenticator: its AAID, how it verifies the user, and the algorithms it may use.
public struct AuthenticatorKind: Sendable, Equatable {
    /// How the user is verified; decides the `amr` of a device login (RFC 8176).
    public enum Verification: String, Sendable, Codable {
        /// An app PIN, checked by Signet as well as by the app (docs/authenticators.md).
        case pin
        case fingerprint
        case face
        /// Fingerprint or face, whichever the phone has (Android's biometric prompt).
        case biometric
        /// The phone's own passcode.
        case passcode

        /// RFC 8176 `amr` values besides the device key's (`hwk` or `swk`).
        public var amr: [String] {
            switch self {
            case .pin, .passcode: return ["pin"]
            case .fingerprint: return ["fpt"]
            case .face: return ["face"]
            case .biometric: return ["user"]
            }
        }
    }

    public var aaid: String
    public var name: String
    public var platform: String
    public var verification: Verification
    /// The signature algorithms and key formats its assertions may declare.
    public var signatureAlgorithms: [UAFSignatureAlgorithm]
    public var publicKeyFormats: [UAFPublicKeyFormat]

    /// Whether its assertions use DER keys and signatures (the iOS authenticators) rather than raw ones.
    public var usesDER: Bool { platform == "ios" }
}

/// The accepted authenticators, by AAID.
///
/// The AAIDs and their algorithms are those of the Nevis Mobile Authentication table (seed 002):
/// iOS authenticators sign with ECDSA P-256 (DER) and send DER keys. For Android the table pairs
/// an RSA signature with a raw EC key, which cannot verify; Signet accepts the RSA signature with
/// an RSA key and ECDSA with the raw EC key, so either reading of the table works.
public enum AuthenticatorCatalog {
    private static let android: ([UAFSignatureAlgorithm], [UAFPublicKeyFormat]) = (
        [.rsaSSAPSSSHA256Raw, .rsaEMSAPKCS1SHA256DER, .rsaEMSAPKCS1SHA256Raw, .secp256r1ECDSASHA256DER, .secp256r1ECDSASHA256Raw],
        [.eccX962Raw, .eccX962DER, .rsa2048DER, .rsa2048Raw]
    )
    private static let apple: ([UAFSignatureAlgorithm], [UAFPublicKeyFormat]) = (
        [.secp256r1ECDSASHA256DER, .secp256r1ECDSASHA256Raw], [.eccX962DER, .eccX962Raw]
    )

    public static let all: [AuthenticatorKind] = [
        AuthenticatorKind(
            aaid: "F1D0#0001", name: "Android PIN", platform: "android", verification: .pin, signatureAlgorithms: android.0,
            publicKeyFormats: android.1),
        AuthenticatorKind(
            aaid: "F1D0#0002", name: "Android fingerprint", platform: "android", verification: .fingerprint, signatureAlgorithms: android.0,
            publicKeyFormats: android.1),
        AuthenticatorKind(
            aaid: "F1D0#0003", name: "Android biometric", platform: "android", verification: .biometric, signatureAlgorithms: android.0,
            publicKeyFormats: android.1),
        AuthenticatorKind(
            aaid: "F1D0#0004", name: "Android device passcode", platform: "android", verification: .passcode, signatureAlgorithms: android.0,
            publicKeyFormats: android.1),
        AuthenticatorKind(
            aaid: "F1D0#1001", name: "iOS PIN", platform: "ios", verification: .pin, signatureAlgorithms: apple.0, publicKeyFormats: apple.1),
        AuthenticatorKind(
            aaid: "F1D0#1002", name: "Touch ID", platform: "ios", verification: .fingerprint, signatureAlgorithms: apple.0, publicKeyFormats: apple.1),
        AuthenticatorKind(
            aaid: "F1D0#1003", name: "Face ID", platform: "ios", verification: .face, signatureAlgorithms: apple.0, publicKeyFormats: apple.1),
        AuthenticatorKind(
            aaid: "F1D0#1004", name: "iOS device passcode", platform: "ios", verification: .passcode, signatureAlgorithms: apple.0,
            publicKeyFormats: apple.1),
    ]

    public static func kind(_ aaid: String) -> AuthenticatorKind? { all.first { $0.aaid == aaid.uppercased() } }
}
