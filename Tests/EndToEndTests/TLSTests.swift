import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import SignetScript
import SignetTesting
import SwiftASN1
import Testing
import X509

@Suite("TLS")
struct TLSTests {
    @Test(
        "serve with --tls-certificate/--tls-key speaks https (TLS 1.2 at least, AEAD suites only), issues an https issuer, sends HSTS and __Host- Secure cookies"
    )
    func servesTLS() async throws {
        let data = try SignetCommand.dataFolder()
        let files = try TestTLS.serverCertificate(in: data)
        let port = try FreePort.find()
        let server = try ChildProcess.start(
            SignetCommand.executable.path,
            [
                "serve", "--data-dir", data, "--port", String(port), "--password-hash-cost", "4", "--tls-certificate", files.certificate, "--tls-key",
                files.key,
            ])
        defer { server.terminate() }

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none  // self-signed, made above
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow))
        func get(_ path: String) async throws -> HTTPClientResponse {
            try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)\(path)"), timeout: .seconds(10))
        }
        var discovery: HTTPClientResponse?
        for _ in 0..<150 where discovery == nil {
            discovery = try? await get("/.well-known/openid-configuration")
            if discovery == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let response = try #require(discovery)
        #expect(response.status == .ok)
        let body = try await response.body.collect(upTo: 1 << 20)
        let document = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        #expect(document?["issuer"] as? String == "https://127.0.0.1:\(port)")

        let authorization = TestAuthorization(clientID: "demo-app", redirectURI: "dev.signet.demo.app:/callback")
        let page = try await client.execute(HTTPClientRequest(url: authorization.url(issuer: "https://127.0.0.1:\(port)")), timeout: .seconds(10))
        #expect(page.status == .ok)
        let cookie = try #require(page.headers["Set-Cookie"].first)
        #expect(cookie.hasPrefix("__Host-signet_browser="))
        #expect(cookie.contains("Secure"))
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.contains("Path=/"))
        #expect(!cookie.lowercased().contains("domain="))
        #expect(page.headers["Strict-Transport-Security"].first == "max-age=31536000")
        try await client.shutdown()

        // A client that speaks at most TLS 1.2 is served; one that speaks at most TLS 1.1 is refused.
        var twelve = TLSConfiguration.makeClientConfiguration()
        twelve.certificateVerification = .none
        twelve.maximumTLSVersion = .tlsv12
        let twelveClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: twelve))
        let served = try await twelveClient.execute(
            HTTPClientRequest(url: "https://127.0.0.1:\(port)/.well-known/openid-configuration"), timeout: .seconds(10))
        #expect(served.status == .ok)
        try await twelveClient.shutdown()
        var old = TLSConfiguration.makeClientConfiguration()
        old.certificateVerification = .none
        old.maximumTLSVersion = .tlsv11
        let oldClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: old))
        await #expect(throws: (any Error).self) {
            _ = try await oldClient.execute(
                HTTPClientRequest(url: "https://127.0.0.1:\(port)/.well-known/openid-configuration"), timeout: .seconds(10))
        }
        try await oldClient.shutdown()
        // TLS 1.2 only with BCP 195's AEAD suites (FAPI 2.0 §5.2): a CBC suite is refused.
        var cbc = TLSConfiguration.makeClientConfiguration()
        cbc.certificateVerification = .none
        cbc.maximumTLSVersion = .tlsv12
        cbc.cipherSuiteValues = [.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA]
        let cbcClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: cbc))
        await #expect(throws: (any Error).self) {
            _ = try await cbcClient.execute(
                HTTPClientRequest(url: "https://127.0.0.1:\(port)/.well-known/openid-configuration"), timeout: .seconds(10))
        }
        try await cbcClient.shutdown()
    }
}
