// The UAF client and ASM in one: reads a provider's UAF request, has the authenticator sign, and writes the response.
import Crypto
import Foundation
import SignetCore

/// What signs for an authenticator: its UAuth key, in software or in the Secure Enclave.
public protocol UAFSigner: Sendable {
    /// The public key as the registration declares it (``UAFPublicKeyFormat``).
    var publicKey: [UInt8] { get }
    var signatureAlgorithm: UAFSignatureAlgorithm { get }
    var publicKeyFormat: UAFPublicKeyFormat { get }
    /// A signature of `data` in ``signatureAlgorithm``'s encoding, after the user was verified.
    func sign(_ data: [UInt8]) async throws -> [UInt8]
}

/// A software P-256 UAuth key (Linux, tests, and the PIN authenticator anywhere).
///
/// Prints as `****`: the key is a secret.
public struct SoftwareUAFSigner: UAFSigner, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let key: P256.Signing.PrivateKey
    /// DER keys and signatures (the iOS authenticators' formats), or raw ones (Android's).
    public let der: Bool

    public init(key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), der: Bool = true) {
        self.key = key
        self.der = der
    }

    public var publicKey: [UInt8] { der ? Array(key.publicKey.derRepresentation) : Array(key.publicKey.x963Representation) }
    public var signatureAlgorithm: UAFSignatureAlgorithm { der ? .secp256r1ECDSASHA256DER : .secp256r1ECDSASHA256Raw }
    public var publicKeyFormat: UAFPublicKeyFormat { der ? .eccX962DER : .eccX962Raw }

    public func sign(_ data: [UInt8]) throws -> [UInt8] {
        let signature = try key.signature(for: data)
        return der ? Array(signature.derRepresentation) : Array(signature.rawRepresentation)
    }

    public var description: String { "SoftwareUAFSigner(****)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["key": "****"]) }
}

/// Builds UAF 1.1 responses (UAF Protocol §3.4.6, §3.5.6) for one facet: the steps a FIDO UAF
/// client and ASM take, with the authenticator's signing given as a ``UAFSigner``.
public struct UAFClient: Sendable {
    /// This app's facet id (`ios:bundle-id:…`), which the provider must trust.
    public let facetID: String

    public init(facetID: String) { self.facetID = facetID }

    /// A registration request's one element.
    public static func registrationRequest(_ envelope: UAFReturnRequest) throws -> UAFRegistrationRequest {
        try single(UAFRegistrationRequest.self, envelope, op: .registration)
    }

    /// An authentication request's one element.
    public static func authenticationRequest(_ envelope: UAFReturnRequest) throws -> UAFAuthenticationRequest {
        try single(UAFAuthenticationRequest.self, envelope, op: .authentication)
    }

    /// The AAIDs a request's policy accepts (each combination's first criteria), in its order.
    public static func acceptedAAIDs(_ policy: UAFPolicy) -> [String] {
        policy.accepted.compactMap { $0.first?.aaid }.flatMap { $0 }
    }

    /// The registration response for `request`, by a new key `signer` with `keyID`, its PIN key
    /// (X9.62) when it is a PIN authenticator.
    public func register(
        _ request: UAFRegistrationRequest, aaid: String, keyID: [UInt8], signer: any UAFSigner, signCounter: UInt32 = 0, pinKey: [UInt8]? = nil
    )
        async throws -> String
    {
        let (fcParams, hash) = try finalChallenge(request.header, challenge: request.challenge)
        let data = UAFKeyRegistrationData(
            aaid: aaid, signatureAlgorithm: signer.signatureAlgorithm, publicKeyFormat: signer.publicKeyFormat, finalChallengeHash: hash,
            keyID: keyID,
            signCounter: signCounter, publicKey: signer.publicKey,
            extensions: pinKey.map { [UAFExtension(id: UAFPINProof.keyExtension, data: $0, critical: true)] } ?? [])
        // Surrogate basic attestation: the new key signs its own registration data.
        let signature = try await signer.sign(data.tlv.encoded)
        let assertion = UAFRegistrationAssertion(keyRegistrationData: data, surrogateSignature: signature)
        return try Self.text([
            UAFResponse(header: request.header, fcParams: fcParams, assertions: [UAFAuthenticatorAssertion(assertion: assertion.tlv.encoded)])
        ])
    }

    /// The authentication response for `request` by the authenticator `aaid`/`keyID`.
    ///
    /// - Parameters:
    ///   - transactionShown: the transaction the user saw and confirmed (its content, decoded), when the request had one.
    ///   - pinKey: the key derived from the PIN typed, for a PIN authenticator.
    ///   - newPINKey: the new PIN's public key (X9.62), in a PIN change.
    public func authenticate(
        _ request: UAFAuthenticationRequest, aaid: String, keyID: [UInt8], signer: any UAFSigner, signCounter: UInt32,
        transactionShown: [UInt8]? = nil,
        pinKey: P256.Signing.PrivateKey? = nil, newPINKey: [UInt8]? = nil
    ) async throws -> String {
        let (fcParams, hash) = try finalChallenge(request.header, challenge: request.challenge)
        var extensions: [UAFExtension] = []
        if let pinKey {
            let proof = try pinKey.signature(for: UAFPINProof.message(finalChallengeHash: hash, keyID: keyID))
            extensions.append(UAFExtension(id: UAFPINProof.proofExtension, data: Array(proof.derRepresentation), critical: true))
        }
        if let newPINKey { extensions.append(UAFExtension(id: UAFPINProof.newKeyExtension, data: newPINKey, critical: true)) }
        var nonce = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in nonce.indices { nonce[index] = UInt8.random(in: 0...255, using: &generator) }
        let data = UAFSignedData(
            aaid: aaid, authenticationMode: transactionShown == nil ? .userVerified : .transactionConfirmed,
            signatureAlgorithm: signer.signatureAlgorithm,
            authenticatorNonce: nonce, finalChallengeHash: hash, transactionContentHash: transactionShown.map { Array(SHA256.hash(data: $0)) } ?? [],
            keyID: keyID, signCounter: signCounter, extensions: extensions)
        let signature = try await signer.sign(data.tlv.encoded)
        let assertion = UAFAuthenticationAssertion(signedData: data, signature: signature)
        return try Self.text([
            UAFResponse(header: request.header, fcParams: fcParams, assertions: [UAFAuthenticatorAssertion(assertion: assertion.tlv.encoded)])
        ])
    }

    /// fcParams (base64url) and its SHA-256, for a request's header and challenge (UAF Protocol §3.2.1).
    func finalChallenge(_ header: UAFHeader, challenge: String) throws -> (String, [UInt8]) {
        guard let appID = header.appID else {
            throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the UAF request names no appID")
        }
        let params = UAFFinalChallengeParams(appID: appID, challenge: challenge, facetID: facetID)
        let fcParams = Data(try JSONEncoder().encode(params)).base64URLEncodedString()
        return (fcParams, UAFFinalChallenge.hash(ofFCParams: fcParams))
    }

    private static func single<Message: Decodable>(_ type: Message.Type, _ envelope: UAFReturnRequest, op: UAFOperation) throws -> Message {
        guard envelope.op == op, let messages = try? JSONDecoder().decode([Message].self, from: Data(envelope.uafRequest.utf8)),
            let first = messages.first
        else {
            throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the provider's UAF request is not a \(op.rawValue) request")
        }
        return first
    }

    private static func text(_ responses: [UAFResponse]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return String(decoding: try encoder.encode(responses), as: UTF8.self)
    }
}
