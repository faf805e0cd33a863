// Activation: the device key's certificate from the device CA (issue 8, step 3).
import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing
import X509

@Suite("Devices: activation issues a client certificate once per instance id")
struct DeviceActivationTests {
    let instances = DeviceInstanceTests()

    /// A PEM PKCS#10 request for a fresh P-256 key.
    static func csr(_ key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) throws -> String { try TestDevice.csr(key) }

    /// Signs alice in on the wallet with scope device and the instance id as nonce; returns the access token.
    func deviceToken(_ provider: TestProvider, instance: String, scope: String = "openid device") async throws -> String {
        var authorization = TestAuthorization(clientID: "wallet", redirectURI: DeviceInstanceTests.redirect, scope: scope)
        authorization.nonce = instance
        let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
        return try await provider.redeem(code, authorization, clientAuth: [("client_id", "wallet")]).decode(TokenResponse.self).accessToken
    }

    func activate(_ provider: TestProvider, token: String, body: String, path: String = "/devices/activation") async throws -> ScriptedResponse {
        try await ScriptedBrowser().send(
            "POST", provider.url(path), body: body,
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/pem-certificate-chain")])
    }

    @Test("no CA is made by reading /devices/ca.pem (the one made at start is published); a token that also names another API cannot activate")
    func noCAOnReadAndProviderAudienceOnly() async throws {
        try await withTestProvider { provider in
            try await instances.seed(provider)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await ScriptedBrowser().get(provider.url("/devices/ca.pem")).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(try await provider.store.deviceCAs().count == 1)
            _ = try await provider.admin.updateClient(id: "wallet", .init(resources: ["https://api.example.com"]))
            let instance = try await instances.newInstance(provider)
            let token = try await deviceToken(provider, instance: instance)
            let refused = try await activate(provider, token: token, body: try Self.csr())
            #expect(refused.status == 401)
            #expect(refused.header("WWW-Authenticate")?.contains("invalid_token") == true)
            #expect(try await provider.store.deviceInstance(id: instance) != nil, "not spent")
        }
    }

    @Test("/devices/ca.pem answers the device CA before any activation, and activations chain to that CA; once none is trusted, a 404 says why")
    func caFromTheStart() async throws {
        try await withTestProvider { provider in
            let before = try await ScriptedBrowser().get(provider.url("/devices/ca.pem"))
            #expect(before.status == 200, "\(before.body)")
            #expect(before.header("Content-Type") == "application/pem-certificate-chain")
            #expect(before.body.hasPrefix("-----BEGIN CERTIFICATE-----"))
            let ca = try Certificate(pemEncoded: before.body)
            #expect(ca.subject == ca.issuer, "the self-signed device CA")
            #expect(ca.publicKey.isValidSignature(ca.signature, for: ca))
            #expect(try await provider.store.deviceCAs().count == 1)

            try await instances.seed(provider)
            for _ in 0..<2 {
                let answer = try await activate(
                    provider, token: try await deviceToken(provider, instance: try await instances.newInstance(provider)), body: try Self.csr())
                #expect(answer.status == 201, "\(answer.body)")
                let chain = try #require(answer.json["certificate_chain"] as? [String])
                #expect(try Certificate(pemEncoded: chain[1]) == ca, "the CA published before any activation issues")
                let leaf = try Certificate(pemEncoded: chain[0])
                #expect(leaf.issuer == ca.subject)
                #expect(ca.publicKey.isValidSignature(leaf.signature, for: leaf))
            }
            #expect(try await ScriptedBrowser().get(provider.url("/devices/ca.pem")).body == before.body, "still the one CA")
            #expect(try await provider.store.deviceCAs().count == 1)

            // Past the CA's own end with no activation since: nothing trusted, and the answer says what to do.
            provider.clock.advance(by: ca.notValidAfter.timeIntervalSince(provider.clock.now) + 1)
            let none = try await ScriptedBrowser().get(provider.url("/devices/ca.pem"))
            #expect(none.status == 404)
            #expect((none.json["error_description"] as? String)?.contains("no device CA is trusted now") == true, "\(none.body)")
            #expect((none.json["error_description"] as? String)?.contains("signet ca rotate") == true)
        }
    }

    @Test("activation: a CSR and the device token give a certificate for urn:signet:device:<instance id> from the published CA, and a stored device")
    func activation() async throws {
        try await withTestProvider { provider in
            try await instances.seed(provider)
            let instance = try await instances.newInstance(provider)
            let token = try await deviceToken(provider, instance: instance)
            let key = P256.Signing.PrivateKey()
            let answer = try await activate(provider, token: token, body: try Self.csr(key))
            #expect(answer.status == 201, "\(answer.body)")
            let chain = try #require(answer.json["certificate_chain"] as? [String])
            #expect(chain.count == 2)
            let certificate = try Certificate(pemEncoded: chain[0])
            #expect(certificate.publicKey == Certificate.PublicKey(key.publicKey))
            #expect(DeviceCertificateAuthority.instanceID(of: certificate) == instance)
            let published = try await ScriptedBrowser().get(provider.url("/devices/ca.pem"))
            #expect(published.status == 200, "made when the provider was built")
            #expect(published.body.contains(chain[1].trimmingCharacters(in: .whitespacesAndNewlines)))
            let ca = try Certificate(pemEncoded: chain[1])
            #expect(ca.publicKey.isValidSignature(certificate.signature, for: certificate))
            let device = try #require(try await provider.store.device(instanceID: instance))
            #expect(device.clientID == "wallet")
            #expect(device.certificateThumbprint == (try DeviceCertificateAuthority.x5tS256(of: certificate)))
            #expect((answer.json["device"] as? [String: Any])?["status"] as? String == "activated")
            // The user is told, so an activation by someone else does not go unnoticed.
            let notices = await provider.outbox.messages.filter { $0.purpose == "device.activated" }
            #expect(notices.count == 1)
            #expect(notices.first?.to == "+4511111111")
            #expect(notices.first?.body.contains("Wallet") == true)
            // The instance id is spent: the same token cannot activate another key.
            let again = try await activate(provider, token: token, body: try Self.csr())
            #expect(again.oauthError == "invalid_grant")
        }
    }

    @Test("50 parallel activations of one instance id (each with its own key): exactly one certificate")
    func singleUse() async throws {
        try await withTestProvider { provider in
            try await instances.seed(provider)
            let token = try await deviceToken(provider, instance: try await instances.newInstance(provider))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { try await activate(provider, token: token, body: try Self.csr()).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 1)
            #expect(statuses.filter { $0 == 400 }.count == 49)
        }
    }

    @Test(
        "refusals: no media type, no token, a token without scope device, a garbage or tampered CSR (which does not spend the instance id), an expired instance id"
    )
    func refusals() async throws {
        try await withTestProvider { provider in
            try await instances.seed(provider)
            let untyped = try await ScriptedBrowser().send("POST", provider.url("/devices/activation"), body: try Self.csr(), headers: [])
            #expect(untyped.status == 415)
            let noToken = try await ScriptedBrowser().send(
                "POST", provider.url("/devices/activation"), body: try Self.csr(), headers: [("Content-Type", "application/pem-certificate-chain")])
            #expect(noToken.status == 401)
            let plain = try await deviceToken(provider, instance: "not-an-instance", scope: "openid")
            let withoutScope = try await activate(provider, token: plain, body: try Self.csr())
            #expect(withoutScope.status == 403)
            #expect(withoutScope.header("WWW-Authenticate")?.contains("insufficient_scope") == true)

            let instance = try await instances.newInstance(provider)
            let token = try await deviceToken(provider, instance: instance)
            #expect(try await activate(provider, token: token, body: "not a CSR").oauthError == "invalid_request")
            var tampered = Array(try Self.csr().utf8)
            tampered[tampered.count / 2] = tampered[tampered.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(try await activate(provider, token: token, body: String(decoding: tampered, as: UTF8.self)).oauthError == "invalid_request")
            #expect(try await activate(provider, token: token, body: try Self.csr()).status == 201, "refused requests did not spend the instance id")

            // Logged in just before the instance id expires, activated just after (the token is still valid).
            let late = try await instances.newInstance(provider)
            provider.clock.advance(by: 590)
            let lateToken = try await deviceToken(provider, instance: late)
            provider.clock.advance(by: 20)
            #expect(try await activate(provider, token: lateToken, body: try Self.csr()).oauthError == "invalid_grant")
        }
    }

    @Test("CA rotation: the new CA issues, the old one stays published and trusted, both in /devices/ca.pem")
    func rotation() async throws {
        try await withTestProvider { provider in
            try await instances.seed(provider)
            let first = try await activate(
                provider, token: try await deviceToken(provider, instance: try await instances.newInstance(provider)), body: try Self.csr())
            let oldCA = try #require((first.json["certificate_chain"] as? [String])?.last)
            let authorities = DeviceAuthorities(store: provider.store, clock: provider.clock.signetClock)
            provider.clock.advance(by: 1)
            let rotated = try await authorities.rotate()
            let second = try await activate(
                provider, token: try await deviceToken(provider, instance: try await instances.newInstance(provider)), body: try Self.csr())
            let chain = try #require(second.json["certificate_chain"] as? [String])
            #expect(chain.last == rotated.certificatePEM)
            #expect(chain.last != oldCA)
            let published = try await ScriptedBrowser().get(provider.url("/devices/ca.pem")).body
            #expect(published.contains(rotated.certificatePEM.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(published.contains(oldCA.trimmingCharacters(in: .whitespacesAndNewlines)))
            let trusted = try await authorities.trusted()
            #expect(trusted.count == 2)
            let oldCertificate = try Certificate(pemEncoded: try #require((first.json["certificate_chain"] as? [String])?.first))
            #expect(trusted.contains { if case .valid = $0.verify(oldCertificate, now: provider.clock.now) { true } else { false } })
            // Once what the old CA issued has expired (90 days after it stopped issuing), it is no longer trusted.
            provider.clock.advance(by: 90 * 24 * 3600 + 2)
            #expect(try await authorities.trusted().map(\.certificatePEM) == [rotated.certificatePEM])
        }
    }

    @Test("a CA with less than two certificate lifetimes left is rotated out by the next issuance, so no device certificate is cut short")
    func rotationBeforeTheEnd() async throws {
        try await withTestProvider { provider in
            try await instances.seed(provider)
            let authorities = DeviceAuthorities(store: provider.store, clock: provider.clock.signetClock)
            let first = try await authorities.issuing()
            #expect(try await authorities.issuing().fingerprint == first.fingerprint, "a young CA keeps issuing")
            // Five years less 179 days later: fewer than two 90-day lifetimes are left.
            provider.clock.advance(by: first.certificate.notValidAfter.timeIntervalSince(provider.clock.now) - 179 * 86_400)
            let answer = try await activate(
                provider, token: try await deviceToken(provider, instance: try await instances.newInstance(provider)), body: try Self.csr())
            #expect(answer.status == 201, "\(answer.body)")
            let chain = try #require(answer.json["certificate_chain"] as? [String])
            #expect(chain.last != first.certificatePEM, "a new CA issued it")
            let leaf = try Certificate(pemEncoded: chain[0])
            #expect(leaf.notValidAfter.timeIntervalSince(provider.clock.now) > 89 * 86_400, "its full 90 days")
            #expect(try await authorities.trusted().count == 2, "the old CA stays trusted for what it issued")
        }
    }

    @Test("when storing the device fails, the activation answers an error and the instance id is given back, so the app can try again")
    func failedInsertKeepsInstance() async throws {
        let store = GatedStore()
        try await withTestProvider(store: store) { provider in
            try await instances.seed(provider)
            let instance = try await instances.newInstance(provider)
            let token = try await deviceToken(provider, instance: instance)
            store.failDeviceInserts.set(true)
            let failed = try await activate(provider, token: token, body: try Self.csr())
            #expect(failed.status == 500)
            #expect(try await provider.store.deviceInstance(id: instance) != nil)
            #expect(try await provider.store.device(instanceID: instance) == nil)
            store.failDeviceInserts.set(false)
            #expect(try await activate(provider, token: token, body: try Self.csr()).status == 201)
        }
    }
}
