import Crypto
import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import SignetClient
import SignetClientNIO
import SignetCore
import SignetScript
import SignetTesting
import SwiftASN1
import Testing
import X509

/// A request context that can read the client certificate the TLS handshake proved.
struct TLSPeerContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    func peerCertificate() async throws -> Certificate? {
        guard let peer = try await channel.nioSSL_peerCertificate().get() else { return nil }
        return try Certificate(derEncoded: try peer.toDERBytes())
    }
}

/// A TLS server on loopback whose certificate a test CA issued for 127.0.0.1, trusting `deviceCA` for client certificates.
enum TLSEchoServer {
    static func run<Result: Sendable>(
        deviceCA: TestDeviceCA, serverCA: TestDeviceCA, verification: CertificateVerification, _ body: (_ origin: String) async throws -> Result
    ) async throws -> Result {
        let serverKey = P256.Signing.PrivateKey()
        let now = Date()
        let serverCertificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(3600), issuer: serverCA.name,
            subject: try DistinguishedName { CommonName("127.0.0.1") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
                try ExtendedKeyUsage([.serverAuth])
            },
            issuerPrivateKey: .init(serverCA.key))
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(serverCertificate.serializeAsPEM().pemString.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)))
        tls.certificateVerification = verification
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(deviceCA.pem.utf8), format: .pem)])

        let router = Router(context: TLSPeerContext.self)
        router.get("/whoami") { _, context -> String in
            try await context.peerCertificate().map { $0.subject.description } ?? "none"
        }
        router.get("/large") { _, _ -> String in String(repeating: "x", count: 4096) }
        router.get("/devices/status") { _, context -> Response in
            guard let certificate = try await context.peerCertificate() else {
                return Response(
                    status: .unauthorized, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: #"{"error":"device_certificate_required"}"#)))
            }
            let id = certificate.subject.description.replacingOccurrences(of: "CN=" + DeviceCredential.instanceURIPrefix, with: "")
            let status: [String: Any] = [
                "status": "activated", "instance_id": id, "certificate_not_after": Int(certificate.notValidAfter.timeIntervalSince1970),
                "reactivation_due": false,
            ]
            let body = String(decoding: try JSONSerialization.data(withJSONObject: status), as: UTF8.self)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        var logger = Logger(label: "signet.test.tls")
        logger.logLevel = .critical
        return try await withRunningService("the TLS echo server", logger: logger) { listening in
            Application(
                router: router, server: try .tls(.http1(), tlsConfiguration: tls), configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in await listening(channel.localAddress?.port ?? 0) }, logger: logger)
        } _: { port in
            try await body("https://127.0.0.1:\(port)")
        }
    }
}

@Suite("SignetClientNIO: the device certificate over real TLS on loopback")
struct DeviceMutualTLSTests {
    let deviceCA: TestDeviceCA
    let serverCA: TestDeviceCA

    init() throws {
        deviceCA = try TestDeviceCA()
        serverCA = try TestDeviceCA(commonName: "Signet test server CA")
    }

    func get(_ url: String, presenting credential: DeviceCredential?, maximumResponseSize: Int = 1 << 20) async throws -> HTTPTransportResponse {
        try await NIOHTTPTransport.withTransport(
            presenting: credential, additionalTrustRoots: [serverCA.pem], maximumResponseSize: maximumResponseSize
        ) { transport in
            try await transport.send(HTTPTransportRequest(method: "GET", url: url))
        }
    }

    @Test("a server that requires a client certificate sees the device certificate the transport presents")
    func presentsDeviceCertificate() async throws {
        let credential = try deviceCA.credential(instanceID: "tls-instance")
        try await TLSEchoServer.run(deviceCA: deviceCA, serverCA: serverCA, verification: .noHostnameVerification) { origin in
            let response = try await get(origin + "/whoami", presenting: credential)
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "CN=urn:signet:device:tls-instance")
        }
    }

    @Test("without a credential a server that asks sees none; one that requires a certificate refuses the handshake")
    func withoutCertificate() async throws {
        try await TLSEchoServer.run(deviceCA: deviceCA, serverCA: serverCA, verification: .optionalVerification) { origin in
            let response = try await get(origin + "/whoami", presenting: nil)
            #expect(String(decoding: response.body, as: UTF8.self) == "none")
        }
        try await TLSEchoServer.run(deviceCA: deviceCA, serverCA: serverCA, verification: .noHostnameVerification) { origin in
            await #expect(throws: SignetError(.transportFailure, "")) { _ = try await get(origin + "/whoami", presenting: nil) }
            // A certificate from another CA is refused as well.
            let foreign = try TestDeviceCA(commonName: "Someone else's CA").credential(instanceID: "foreign")
            await #expect(throws: SignetError(.transportFailure, "")) { _ = try await get(origin + "/whoami", presenting: foreign) }
        }
    }

    @Test("the server's certificate is verified: without its CA among the trust roots, nothing is sent")
    func verifiesServer() async throws {
        let failure = try await TLSEchoServer.run(deviceCA: deviceCA, serverCA: serverCA, verification: .optionalVerification) { origin in
            await #expect(throws: SignetError.self) {
                try await NIOHTTPTransport.withTransport(presenting: nil) {
                    try await $0.send(HTTPTransportRequest(method: "GET", url: origin + "/whoami"))
                }
            }
        }
        #expect(failure?.code == .transportFailure)
    }

    @Test("a response larger than maximumResponseSize is refused as malformed")
    func boundedResponse() async throws {
        try await TLSEchoServer.run(deviceCA: deviceCA, serverCA: serverCA, verification: .optionalVerification) { origin in
            let whole = try await get(origin + "/large", presenting: nil)
            #expect(whole.body.count == 4096)
            await #expect(throws: SignetError(.malformedMessage, "")) {
                _ = try await get(origin + "/large", presenting: nil, maximumResponseSize: 1024)
            }
        }
    }

    @Test("DeviceEnrolment.status() over NIOMutualTLSTransportFactory: the provider knows the device by its certificate")
    func statusOverMutualTLS() async throws {
        let credential = try deviceCA.credential(instanceID: "status-instance")
        let store = MemoryDeviceKeyStore(credential: credential)
        try await TLSEchoServer.run(deviceCA: deviceCA, serverCA: serverCA, verification: .optionalVerification) { origin in
            let client = SignetClient(configuration: .init(issuer: origin, clientID: "app", redirectURI: "com.example.app:/callback"))
            let devices = client.devices(keyStore: store, mutualTLS: NIOMutualTLSTransportFactory(additionalTrustRoots: [serverCA.pem]))
            guard case .activated(let device) = try await devices.status() else { Issue.record("expected activated"); return }
            #expect(device.instanceID == "status-instance")
            #expect(device.certificateNotAfter == Date(timeIntervalSince1970: credential.notValidAfter.timeIntervalSince1970.rounded(.down)))
            // A factory that does not trust the server's CA fails as transport, and says nothing about the device.
            let untrusting = client.devices(keyStore: store, mutualTLS: NIOMutualTLSTransportFactory())
            await #expect(throws: SignetClientError(.transport, isRetryable: true)) { _ = try await untrusting.status() }
        }
    }

    @Test("DeviceBoundTransport presents the certificate once the store holds one, and the fallback's nothing before activation or after expiry")
    func boundTransport() async throws {
        let credential = try deviceCA.credential(instanceID: "bound-instance")
        let store = MemoryDeviceKeyStore()
        try await TLSEchoServer.run(deviceCA: deviceCA, serverCA: serverCA, verification: .optionalVerification) { origin in
            try await NIOHTTPTransport.withTransport(presenting: nil, additionalTrustRoots: [serverCA.pem]) { plain in
                let factory = NIOMutualTLSTransportFactory(additionalTrustRoots: [serverCA.pem])
                let bound = DeviceBoundTransport(keyStore: store, mutualTLS: factory, fallback: plain)
                let whoami = HTTPTransportRequest(method: "GET", url: origin + "/whoami")
                #expect(String(decoding: try await bound.send(whoami).body, as: UTF8.self) == "none", "not activated: nothing presented")
                try await store.save(credential.key, certificateChain: credential.certificateChain)
                #expect(String(decoding: try await bound.send(whoami).body, as: UTF8.self).contains("bound-instance"))
                let expired = DeviceBoundTransport(
                    keyStore: store, mutualTLS: factory, fallback: plain, now: { credential.notValidAfter.addingTimeInterval(1) })
                #expect(String(decoding: try await expired.send(whoami).body, as: UTF8.self) == "none", "an expired certificate is not presented")
                await store.delete()
                #expect(String(decoding: try await bound.send(whoami).body, as: UTF8.self) == "none", "deactivated: nothing presented")
            }
        }
    }

    @Test("a trust root that is not PEM is a misuse, before any connection")
    func badTrustRoot() throws {
        #expect(throws: SignetClientError(.misuse, isRetryable: false)) {
            _ = try DeviceTLSConfiguration.client(presenting: nil, additionalTrustRoots: ["not a certificate"])
        }
    }
}
