// The two UAFV1TLV assertions (Authenticator Commands §6.2.3, §6.3.3): registration (a Key
// Registration Data block and its attestation) and authentication (signed data and a signature).
// Read strictly and built by the SDK's software authenticator.

/// An AAID, `VVVV#MMMM` in hexadecimal (FIDO UAF Protocol §3.1.4).
public enum UAFAAID {
    /// Whether `text` has the form of an AAID.
    public static func isWellFormed(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 9, bytes[4] == UInt8(ascii: "#") else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            index == 4 || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
        }
    }

    static func read(_ bytes: [UInt8], context: String) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self), isWellFormed(text) else {
            throw SignetError(.malformedMessage, "\(context): the AAID is not of the form VVVV#MMMM")
        }
        return text.uppercased()
    }
}

/// Lengths UAF allows, and the bounds Signet sets where it allows any.
enum UAFLengths {
    static let hash = 32...32  // SHA-256, the hash of every supported algorithm
    static let keyID = 16...255
    static let nonce = 8...64
    static let publicKey = 1...2048
    static let signature = 1...1024
}

/// `TAG_UAFV1_KRD`: what the authenticator says about a new key, signed by its attestation.
public struct UAFKeyRegistrationData: Sendable, Equatable {
    public var aaid: String
    public var authenticatorVersion: UInt16
    /// `AuthenticationMode` of the assertion info; `0x01` at registration.
    public var authenticationMode: UInt8
    public var signatureAlgorithm: UAFSignatureAlgorithm
    public var publicKeyFormat: UAFPublicKeyFormat
    /// SHA-256 of the base64url `fcParams` text.
    public var finalChallengeHash: [UInt8]
    public var keyID: [UInt8]
    public var signCounter: UInt32
    public var registrationCounter: UInt32
    public var publicKey: [UInt8]
    public var extensions: [UAFExtension]

    public init(
        aaid: String, authenticatorVersion: UInt16 = 1, signatureAlgorithm: UAFSignatureAlgorithm, publicKeyFormat: UAFPublicKeyFormat,
        finalChallengeHash: [UInt8], keyID: [UInt8], signCounter: UInt32 = 0, registrationCounter: UInt32 = 0, publicKey: [UInt8],
        extensions: [UAFExtension] = []
    ) {
        self.aaid = aaid
        self.authenticatorVersion = authenticatorVersion
        self.authenticationMode = UAFAuthenticationMode.userVerified.rawValue
        self.signatureAlgorithm = signatureAlgorithm
        self.publicKeyFormat = publicKeyFormat
        self.finalChallengeHash = finalChallengeHash
        self.keyID = keyID
        self.signCounter = signCounter
        self.registrationCounter = registrationCounter
        self.publicKey = publicKey
        self.extensions = extensions
    }

    init(_ item: UAFTLV) throws {
        let context = "the Key Registration Data"
        let fields = try UAFFields(item, allowed: [.aaid, .assertionInfo, .finalChallengeHash, .keyID, .counters, .publicKey], context: context)
        aaid = try UAFAAID.read(try fields.required(.aaid, "TAG_AAID", lengths: 9...9), context: context)
        let info = try fields.required(.assertionInfo, "TAG_ASSERTION_INFO", lengths: 7...7)
        authenticatorVersion = UAFBytes.uint16(info[0..<2])
        authenticationMode = info[2]
        signatureAlgorithm = UAFSignatureAlgorithm(rawValue: UAFBytes.uint16(info[3..<5]))
        publicKeyFormat = UAFPublicKeyFormat(rawValue: UAFBytes.uint16(info[5..<7]))
        finalChallengeHash = try fields.required(.finalChallengeHash, "TAG_FINAL_CHALLENGE_HASH", lengths: UAFLengths.hash)
        keyID = try fields.required(.keyID, "TAG_KEYID", lengths: UAFLengths.keyID)
        let counters = try fields.required(.counters, "TAG_COUNTERS", lengths: 8...8)
        signCounter = UAFBytes.uint32(counters[0..<4])
        registrationCounter = UAFBytes.uint32(counters[4..<8])
        publicKey = try fields.required(.publicKey, "TAG_PUB_KEY", lengths: UAFLengths.publicKey)
        extensions = fields.extensions
    }

    public var tlv: UAFTLV {
        let info =
            UAFBytes.littleEndian(authenticatorVersion) + [authenticationMode] + UAFBytes.littleEndian(signatureAlgorithm.rawValue)
            + UAFBytes.littleEndian(publicKeyFormat.rawValue)
        return UAFTLV(
            .keyRegistrationData,
            children: [
                UAFTLV(.aaid, Array(aaid.utf8)), UAFTLV(.assertionInfo, info), UAFTLV(.finalChallengeHash, finalChallengeHash),
                UAFTLV(.keyID, keyID), UAFTLV(.counters, UAFBytes.littleEndian(signCounter) + UAFBytes.littleEndian(registrationCounter)),
                UAFTLV(.publicKey, publicKey),
            ] + extensions.map(\.tlv))
    }
}

/// How a registration's Key Registration Data is attested.
public enum UAFAttestation: Sendable, Equatable {
    /// `TAG_ATTESTATION_BASIC_SURROGATE`: signed by the new key itself (software authenticators).
    case basicSurrogate(signature: [UInt8])
    /// `TAG_ATTESTATION_BASIC_FULL`: signed by an attestation key whose certificates (DER, leaf first) are given.
    case basicFull(signature: [UInt8], certificates: [[UInt8]])
}

/// `TAG_UAFV1_REG_ASSERTION`: a registration's assertion.
public struct UAFRegistrationAssertion: Sendable, Equatable {
    public var keyRegistrationData: UAFKeyRegistrationData
    /// The KRD item exactly as received (tag and length included): what the attestation signs.
    public var signedBytes: [UInt8]
    public var attestation: UAFAttestation
    /// Extensions outside the signed data.
    public var extensions: [UAFExtension]

    /// Reads an assertion; every tag, length and the nesting are checked.
    public init(tlv bytes: [UInt8]) throws {
        let outer = try UAFTLV.single(bytes)
        guard outer.tag == .regAssertion else {
            throw SignetError(.malformedMessage, "a registration assertion starts with \(outer.tag), not TAG_UAFV1_REG_ASSERTION")
        }
        let fields = try UAFFields(
            outer, allowed: [.keyRegistrationData, .attestationBasicSurrogate, .attestationBasicFull], context: "the registration assertion")
        let krd = try fields.composite(.keyRegistrationData, "TAG_UAFV1_KRD")
        keyRegistrationData = try UAFKeyRegistrationData(krd)
        signedBytes = krd.encoded
        extensions = fields.extensions
        switch (fields.has(.attestationBasicSurrogate), fields.has(.attestationBasicFull)) {
        case (true, false):
            let surrogate = try UAFFields(
                try fields.composite(.attestationBasicSurrogate, "the attestation"), allowed: [.signature], context: "the surrogate attestation")
            attestation = .basicSurrogate(signature: try surrogate.required(.signature, "TAG_SIGNATURE", lengths: UAFLengths.signature))
        case (false, true):
            let full = try fields.composite(.attestationBasicFull, "the attestation")
            var signature: [UInt8]?
            var certificates: [[UInt8]] = []
            for child in try full.children() {
                switch child.tag {
                case .signature where signature == nil && UAFLengths.signature.contains(child.value.count): signature = child.value
                case .attestationCertificate where !child.value.isEmpty: certificates.append(child.value)
                default: throw SignetError(.malformedMessage, "the full attestation holds an unexpected or repeated \(child.tag)")
                }
            }
            guard let signature, !certificates.isEmpty else {
                throw SignetError(.malformedMessage, "the full attestation needs a signature and a certificate")
            }
            attestation = .basicFull(signature: signature, certificates: certificates)
        default:
            throw SignetError(.malformedMessage, "the registration assertion needs exactly one attestation (basic surrogate or basic full)")
        }
    }

    /// A surrogate-attested assertion for `data`, signed with `sign` (the new key).
    public init(keyRegistrationData data: UAFKeyRegistrationData, surrogateSignature: [UInt8]) {
        keyRegistrationData = data
        signedBytes = data.tlv.encoded
        attestation = .basicSurrogate(signature: surrogateSignature)
        extensions = []
    }

    public var tlv: UAFTLV {
        let attestationItem: UAFTLV
        switch attestation {
        case .basicSurrogate(let signature): attestationItem = UAFTLV(.attestationBasicSurrogate, children: [UAFTLV(.signature, signature)])
        case .basicFull(let signature, let certificates):
            attestationItem = UAFTLV(
                .attestationBasicFull, children: [UAFTLV(.signature, signature)] + certificates.map { UAFTLV(.attestationCertificate, $0) })
        }
        return UAFTLV(.regAssertion, signedBytes + attestationItem.encoded + extensions.flatMap(\.tlv.encoded))
    }
}

/// `TAG_UAFV1_SIGNED_DATA`: what an authentication signs.
public struct UAFSignedData: Sendable, Equatable {
    public var aaid: String
    public var authenticatorVersion: UInt16
    /// `0x01` user verified, `0x02` transaction content shown and confirmed.
    public var authenticationMode: UInt8
    public var signatureAlgorithm: UAFSignatureAlgorithm
    public var authenticatorNonce: [UInt8]
    public var finalChallengeHash: [UInt8]
    /// SHA-256 of the transaction content shown, or empty when none was.
    public var transactionContentHash: [UInt8]
    public var keyID: [UInt8]
    public var signCounter: UInt32
    /// Signed extensions (Signet's PIN proof travels here).
    public var extensions: [UAFExtension]

    public init(
        aaid: String, authenticatorVersion: UInt16 = 1, authenticationMode: UAFAuthenticationMode, signatureAlgorithm: UAFSignatureAlgorithm,
        authenticatorNonce: [UInt8], finalChallengeHash: [UInt8], transactionContentHash: [UInt8], keyID: [UInt8], signCounter: UInt32,
        extensions: [UAFExtension] = []
    ) {
        self.aaid = aaid
        self.authenticatorVersion = authenticatorVersion
        self.authenticationMode = authenticationMode.rawValue
        self.signatureAlgorithm = signatureAlgorithm
        self.authenticatorNonce = authenticatorNonce
        self.finalChallengeHash = finalChallengeHash
        self.transactionContentHash = transactionContentHash
        self.keyID = keyID
        self.signCounter = signCounter
        self.extensions = extensions
    }

    init(_ item: UAFTLV) throws {
        let context = "the signed data"
        let fields = try UAFFields(
            item, allowed: [.aaid, .assertionInfo, .authenticatorNonce, .finalChallengeHash, .transactionContentHash, .keyID, .counters],
            context: context)
        aaid = try UAFAAID.read(try fields.required(.aaid, "TAG_AAID", lengths: 9...9), context: context)
        let info = try fields.required(.assertionInfo, "TAG_ASSERTION_INFO", lengths: 5...5)
        authenticatorVersion = UAFBytes.uint16(info[0..<2])
        authenticationMode = info[2]
        signatureAlgorithm = UAFSignatureAlgorithm(rawValue: UAFBytes.uint16(info[3..<5]))
        authenticatorNonce = try fields.required(.authenticatorNonce, "TAG_AUTHENTICATOR_NONCE", lengths: UAFLengths.nonce)
        finalChallengeHash = try fields.required(.finalChallengeHash, "TAG_FINAL_CHALLENGE_HASH", lengths: UAFLengths.hash)
        // Empty when no transaction was shown (mode 0x01), a SHA-256 when one was.
        transactionContentHash = try fields.required(.transactionContentHash, "TAG_TRANSACTION_CONTENT_HASH", lengths: 0...32)
        guard transactionContentHash.isEmpty || transactionContentHash.count == 32 else {
            throw SignetError(.malformedMessage, "\(context): TAG_TRANSACTION_CONTENT_HASH is neither empty nor a SHA-256")
        }
        keyID = try fields.required(.keyID, "TAG_KEYID", lengths: UAFLengths.keyID)
        signCounter = UAFBytes.uint32(try fields.required(.counters, "TAG_COUNTERS", lengths: 4...4)[0..<4])
        extensions = fields.extensions
    }

    public var tlv: UAFTLV {
        let info = UAFBytes.littleEndian(authenticatorVersion) + [authenticationMode] + UAFBytes.littleEndian(signatureAlgorithm.rawValue)
        return UAFTLV(
            .signedData,
            children: [
                UAFTLV(.aaid, Array(aaid.utf8)), UAFTLV(.assertionInfo, info), UAFTLV(.authenticatorNonce, authenticatorNonce),
                UAFTLV(.finalChallengeHash, finalChallengeHash), UAFTLV(.transactionContentHash, transactionContentHash), UAFTLV(.keyID, keyID),
                UAFTLV(.counters, UAFBytes.littleEndian(signCounter)),
            ] + extensions.map(\.tlv))
    }
}

/// `TAG_UAFV1_AUTH_ASSERTION`: an authentication's assertion.
public struct UAFAuthenticationAssertion: Sendable, Equatable {
    public var signedData: UAFSignedData
    /// The signed-data item exactly as received (tag and length included): what the signature covers.
    public var signedBytes: [UInt8]
    public var signature: [UInt8]

    public init(tlv bytes: [UInt8]) throws {
        let outer = try UAFTLV.single(bytes)
        guard outer.tag == .authAssertion else {
            throw SignetError(.malformedMessage, "an authentication assertion starts with \(outer.tag), not TAG_UAFV1_AUTH_ASSERTION")
        }
        let fields = try UAFFields(outer, allowed: [.signedData, .signature], context: "the authentication assertion")
        let signed = try fields.composite(.signedData, "TAG_UAFV1_SIGNED_DATA")
        signedData = try UAFSignedData(signed)
        signedBytes = signed.encoded
        signature = try fields.required(.signature, "TAG_SIGNATURE", lengths: UAFLengths.signature)
        guard fields.extensions.isEmpty else { throw SignetError(.malformedMessage, "extensions belong inside the signed data") }
    }

    public init(signedData: UAFSignedData, signature: [UInt8]) {
        self.signedData = signedData
        self.signedBytes = signedData.tlv.encoded
        self.signature = signature
    }

    public var tlv: UAFTLV { UAFTLV(.authAssertion, signedBytes + UAFTLV(.signature, signature).encoded) }
}
