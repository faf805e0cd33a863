// For the device tests: a device CA made here, and a provider scripted in memory that sees which certificate each request presented.
import Crypto
import Foundation
import SignetClient
import SignetCore
import SignetTesting
import SwiftASN1
import Synchronization
import Testing
import X509

/// A device CA like Signet's: issues client certificates naming `urn:signet:device:<instance id>`.
struct TestDeviceCA: Sendable {
    let key: P256.Signing.PrivateKey
    let certificate: Certificate
    let name: DistinguishedName

    init(commonName: String = "Signet test device CA", now: Date = Date()) throws {
        key = P256.Signing.PrivateKey()
        name = try DistinguishedName { CommonName(commonName) }
        certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86400 * 365), issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                KeyUsage(keyCertSign: true)
            },
            issuerPrivateKey: .init(key))
    }

    var pem: String { (try? certificate.serializeAsPEM().pemString) ?? "" }

    /// A device certificate for the key in `csr` (PEM), after checking the CSR's signature; the chain, leaf first.
    func issue(csr: String, instanceID: String, now: Date = Date(), validity: TimeInterval = 90 * 86400) throws -> [String] {
        let request = try CertificateSigningRequest(pemEncoded: csr)
        #expect(request.publicKey.isValidSignature(request.signature, for: request), "the CSR is signed by its key")
        return try issue(publicKey: request.publicKey, instanceID: instanceID, now: now, validity: validity)
    }

    func issue(publicKey: Certificate.PublicKey, instanceID: String, now: Date = Date(), validity: TimeInterval = 90 * 86400) throws -> [String] {
        let uri = DeviceCredential.instanceURIPrefix + instanceID
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-60), notValidAfter: now.addingTimeInterval(validity), issuer: name,
            subject: try DistinguishedName { CommonName(uri) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
                SubjectAlternativeNames([.uniformResourceIdentifier(uri)])
            },
            issuerPrivateKey: .init(key))
        return [try leaf.serializeAsPEM().pemString, pem]
    }

    /// A credential for a fresh software key, issued by this CA.
    func credential(instanceID: String, now: Date = Date(), validity: TimeInterval = 90 * 86400) throws -> DeviceCredential {
        let key = SoftwareDeviceKey()
        return try DeviceCredential(
            key: key, certificateChain: issue(publicKey: key.privateKey.publicKey, instanceID: instanceID, now: now, validity: validity))
    }
}

/// One request as the scripted provider saw it, with the credential its transport presented.
struct SeenRequest: Sendable {
    let request: HTTPTransportRequest
    let presented: DeviceCredential?

    var path: String { URLComponents(string: request.url)?.path ?? "" }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: request.body ?? Data())) as? [String: Any] ?? [:] }
    var form: FormParameters { FormParameters(encoded: String(decoding: request.body ?? Data(), as: UTF8.self)) ?? FormParameters() }
}

/// A provider scripted in memory: a handler answers, every request is kept with what it presented.
final class ScriptedDeviceProvider: Sendable {
    typealias Handler = @Sendable (SeenRequest) throws -> HTTPTransportResponse
    static let issuer = "https://id.example.com"

    private let handler: Mutex<Handler>
    private let log = Mutex<[SeenRequest]>([])
    private let scopes = Mutex(0)

    init(_ handler: @escaping Handler = { _ in HTTPTransportResponse(status: 500) }) { self.handler = Mutex(handler) }

    func answer(_ handler: @escaping Handler) { self.handler.withLock { $0 = handler } }

    var requests: [SeenRequest] { log.withLock { $0 } }
    /// How many mutual-TLS scopes were opened and closed.
    var closedScopes: Int { scopes.withLock { $0 } }

    /// The transport without a client certificate (the client's own).
    var transport: any HTTPTransport { Channel(provider: self, presented: nil) }
    /// The mutual-TLS factory: its transports present the credential they were made for.
    var mutualTLS: any MutualTLSTransportFactory { Factory(provider: self) }

    func client(dpop: (any DPoPKeyStore)? = nil, now: Date = Date()) -> SignetClient {
        SignetClient(
            configuration: .init(issuer: Self.issuer, clientID: "app", redirectURI: "com.example.app:/callback"), transport: transport,
            dpopKeyStore: dpop,
            now: { now })
    }

    fileprivate func receive(_ request: HTTPTransportRequest, presented: DeviceCredential?) throws -> HTTPTransportResponse {
        let seen = SeenRequest(request: request, presented: presented)
        log.withLock { $0.append(seen) }
        return try handler.withLock { $0 }(seen)
    }

    private struct Channel: HTTPTransport {
        let provider: ScriptedDeviceProvider
        let presented: DeviceCredential?
        func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse { try provider.receive(request, presented: presented) }
    }

    private struct Factory: MutualTLSTransportFactory {
        let provider: ScriptedDeviceProvider
        func withTransport<Result: Sendable>(presenting credential: DeviceCredential, _ body: (any HTTPTransport) async throws -> Result) async throws
            -> Result
        {
            defer { provider.scopes.withLock { $0 += 1 } }
            return try await body(Channel(provider: provider, presented: credential))
        }
    }
}

/// A JSON answer.
func jsonAnswer(_ status: Int, _ object: [String: Any]) -> HTTPTransportResponse {
    HTTPTransportResponse(
        status: status, headers: [("Content-Type", "application/json")], body: (try? JSONSerialization.data(withJSONObject: object)) ?? Data())
}

/// An OAuth-style error answer.
func errorAnswer(_ status: Int, _ error: String, _ description: String? = nil) -> HTTPTransportResponse {
    var body = ["error": error]
    body["error_description"] = description
    return jsonAnswer(status, body)
}

/// A device record as the provider sends it.
func deviceJSON(_ instanceID: String, status: String = "activated", name: String? = "Erin's phone") -> [String: Any] {
    var record: [String: Any] = [
        "instance_id": instanceID, "status": status, "platform": "linux", "certificate_serial": "0a1b", "certificate_not_after": 1_790_000_000,
        "reactivation_due_at": 1_788_790_400, "attestation": "none", "created_at": 1_782_000_000, "last_used_at": 1_782_000_500,
        "revoked_at": NSNull(), "revocation_reason": NSNull(),
    ]
    if let name { record["name"] = name }
    return record
}

/// A temporary folder, not made yet (the code under test makes it), deleted after `body`.
func withTemporaryDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    try await TestFolder.with("device", create: false, body)
}
