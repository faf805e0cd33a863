import Crypto
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTesting
import Testing
import X509

@Suite("DeviceEnrolment: requests sent and answers read, against a scripted provider")
struct DeviceEnrolmentTests {
    let provider = ScriptedDeviceProvider()
    let store = MemoryDeviceKeyStore()
    let ca: TestDeviceCA

    init() throws { ca = try TestDeviceCA() }

    func devices(dpop: (any DPoPKeyStore)? = nil) -> DeviceEnrolment {
        provider.client(dpop: dpop).devices(keyStore: store, mutualTLS: provider.mutualTLS)
    }

    /// Answers activation-shaped requests (`{csr}` in, `{certificate_chain, device}` out) for `instanceID`.
    func issuing(_ instanceID: String, status: Int = 201) -> ScriptedDeviceProvider.Handler {
        let ca = ca
        return { seen in
            let chain = try ca.issue(csr: try #require(seen.json["csr"] as? String), instanceID: instanceID)
            return jsonAnswer(status, ["certificate_chain": chain, "device": deviceJSON(instanceID)])
        }
    }

    /// Puts an activated credential for `instanceID` in the store.
    func activated(_ instanceID: String = "old-instance") async throws -> DeviceCredential {
        let credential = try ca.credential(instanceID: instanceID)
        try await store.save(credential.key, certificateChain: credential.certificateChain)
        return credential
    }

    // MARK: instance id and login

    @Test("instanceID: POST /devices/instances with the client_id as a form, no credentials; reads instance_id and expires_in")
    func instanceID() async throws {
        provider.answer { _ in jsonAnswer(201, ["instance_id": "abc_DEF-123", "expires_in": 600]) }
        let instance = try await devices().instanceID()
        #expect(instance == DeviceInstance(id: "abc_DEF-123", expiresIn: 600))
        let seen = try #require(provider.requests.first)
        #expect(seen.request.method == "POST")
        #expect(seen.request.url == ScriptedDeviceProvider.issuer + "/devices/instances")
        #expect(seen.request.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(seen.form["client_id"] == "app")
        #expect(seen.request.header("Authorization") == nil)
        #expect(seen.presented == nil)
    }

    @Test("instanceID: a rate limit keeps the provider's error; an answer without instance_id is invalid_response")
    func instanceIDErrors() async throws {
        provider.answer { _ in errorAnswer(429, "slow_down", "60 per 10 minutes") }
        do {
            _ = try await devices().instanceID()
            Issue.record("a 429 must throw")
        } catch let error as SignetClientError {
            #expect(error.code == .server)
            #expect(error.status == 429)
            #expect(error.serverError?.error.rawValue == "slow_down")
        }
        provider.answer { _ in jsonAnswer(201, ["expires_in": 600]) }
        await #expect(throws: SignetClientError(.invalidResponse, status: 201, isRetryable: false)) { _ = try await devices().instanceID() }
    }

    @Test("login parameters carry the instance id as nonce and the scope with openid and device, once each")
    func loginParameters() throws {
        let instance = DeviceInstance(id: "instance-7", expiresIn: 600)
        let parameters = devices().authorizationParameters(for: instance, scope: "profile device")
        #expect(parameters.nonce == "instance-7")
        #expect(parameters.scope == "profile device openid")
        #expect(parameters.codeVerifier != nil)
        #expect(parameters.formParameters["nonce"] == "instance-7")
        #expect(DeviceEnrolment.scope(including: "openid") == "openid device")
        #expect(DeviceEnrolment.scope(including: "") == "openid device")
        // Without an instance id, the nonce stays fresh and random (existing callers are unchanged).
        let plain = AuthorizationParameters(clientID: "app", redirectURI: "com.example.app:/callback")
        #expect(plain.nonce?.count == 22)
    }

    @Test("the browser request for a device login has nonce = instance id and scope device (against the test provider)")
    func authorizationRequest() async throws {
        try await withTestProvider { testProvider in
            try await TestApp.seed(testProvider)
            let client = TestApp.client(testProvider)
            let request = try await client.devices(keyStore: store, mutualTLS: provider.mutualTLS).authorizationRequest(
                for: DeviceInstance(id: "inst-42", expiresIn: 600))
            #expect(queryItem("nonce", in: request.url) == "inst-42")
            #expect(queryItem("scope", in: request.url) == "openid device")
            #expect(request.parameters.nonce == "inst-42")
        }
    }

    // MARK: activation

    @Test("issueCertificate: POST /devices/activation, JSON {csr, name, platform}, Bearer token, no certificate; keeps the chain for the CSR's key")
    func activation() async throws {
        provider.answer(issuing("new-instance"))
        let record = try await devices().issueCertificate(accessToken: "token-1", name: "Erin's phone", platform: .linux)
        #expect(record.instanceID == "new-instance")
        #expect(record.status == .activated)
        #expect(record.name == "Erin's phone")
        #expect(record.platform == .linux)
        #expect(record.certificateNotAfter == Date(timeIntervalSince1970: 1_790_000_000))
        #expect(record.reactivationDueAt == Date(timeIntervalSince1970: 1_788_790_400))
        #expect(record.revokedAt == nil)
        let seen = try #require(provider.requests.first)
        #expect(seen.request.method == "POST")
        #expect(seen.request.url == ScriptedDeviceProvider.issuer + "/devices/activation")
        #expect(seen.request.header("Authorization") == "Bearer token-1")
        #expect(seen.request.header("Content-Type") == "application/json")
        #expect(seen.request.header("DPoP") == nil)
        #expect(seen.presented == nil)
        #expect(seen.json["name"] as? String == "Erin's phone")
        #expect(seen.json["platform"] as? String == "linux")
        let csr = try CertificateSigningRequest(pemEncoded: try #require(seen.json["csr"] as? String))
        let kept = try #require(await store.load())
        #expect(kept.instanceID == "new-instance")
        #expect(csr.publicKey == kept.key.privateKey.publicKey)
        #expect(kept.certificateChain.count == 2)
    }

    @Test("issueCertificate after an initial certificate: the same key is certified, over mutual TLS with the initial certificate")
    func activationAfterInitialCertificate() async throws {
        let initial = try ca.credential(instanceID: "initial-instance", validity: 300)
        try await store.save(initial.key, certificateChain: initial.certificateChain)
        provider.answer(issuing("initial-instance"))
        try await devices().issueCertificate(accessToken: "token-2")
        let seen = try #require(provider.requests.first)
        #expect(seen.presented?.serialNumber == initial.serialNumber, "the initial certificate is presented")
        let csr = try CertificateSigningRequest(pemEncoded: try #require(seen.json["csr"] as? String))
        #expect(csr.publicKey == initial.key.privateKey.publicKey, "its key, the one the attestation vouched for")
        let kept = try #require(await store.load())
        #expect(kept.serialNumber != initial.serialNumber)
        #expect(kept.key.privateKey.publicKey == initial.key.privateKey.publicKey)
    }

    @Test("issueCertificate with a device certificate in the store (a revoked device): a new key, nothing presented")
    func activationAfterDeviceCertificate() async throws {
        let device = try await activated("locked-instance")
        provider.answer(issuing("next-instance"))
        try await devices().issueCertificate(accessToken: "token-3")
        let seen = try #require(provider.requests.first)
        #expect(seen.presented == nil)
        let csr = try CertificateSigningRequest(pemEncoded: try #require(seen.json["csr"] as? String))
        #expect(csr.publicKey != device.key.privateKey.publicKey, "the retired key is never certified again")
    }

    @Test("issueCertificate with a DPoP client: Authorization DPoP and a proof naming POST, the URL and the token")
    func activationWithDPoP() async throws {
        provider.answer(issuing("new-instance"))
        try await devices(dpop: MemoryDPoPKeyStore()).issueCertificate(accessToken: "dpop-token")
        let seen = try #require(provider.requests.first)
        #expect(seen.request.header("Authorization") == "DPoP dpop-token")
        let proof = try proofClaims(seen.request)
        #expect(proof["htm"] as? String == "POST")
        #expect(proof["htu"] as? String == ScriptedDeviceProvider.issuer + "/devices/activation")
        #expect(proof["ath"] as? String == DPoPProofMaker.accessTokenHash("dpop-token"))
    }

    @Test("issueCertificate: a certificate_chain sent as one PEM string is read too")
    func activationChainAsString() async throws {
        let ca = ca
        provider.answer { seen in
            let chain = try ca.issue(csr: try #require(seen.json["csr"] as? String), instanceID: "joined")
            return jsonAnswer(201, ["certificate_chain": chain.joined(separator: "\n"), "device": deviceJSON("joined")])
        }
        try await devices().issueCertificate(accessToken: "t")
        #expect(await store.load()?.certificateChain.count == 2)
    }

    @Test("a refused activation, or a chain for another key or instance, leaves the store as it was")
    func activationRefused() async throws {
        let old = try await activated()
        provider.answer { _ in errorAnswer(403, "insufficient_scope", "the token lacks the scope device") }
        do {
            try await devices().issueCertificate(accessToken: "t")
            Issue.record("a refused activation must throw")
        } catch let error as SignetClientError {
            #expect(error.code == .server)
            #expect(error.serverError?.error == .insufficientScope)
        }
        let ca = ca
        provider.answer { _ in
            jsonAnswer(
                201,
                ["certificate_chain": try ca.issue(publicKey: SoftwareDeviceKey().privateKey.publicKey, instanceID: "x"), "device": deviceJSON("x")])
        }
        await #expect(throws: SignetClientError(.responseMismatch, isRetryable: false)) { try await devices().issueCertificate(accessToken: "t") }
        provider.answer { seen in
            jsonAnswer(
                201, ["certificate_chain": try ca.issue(csr: try #require(seen.json["csr"] as? String), instanceID: "a"), "device": deviceJSON("b")])
        }
        await #expect(throws: SignetClientError(.responseMismatch, isRetryable: false)) { try await devices().issueCertificate(accessToken: "t") }
        provider.answer { _ in jsonAnswer(201, ["certificate_chain": [String](), "device": deviceJSON("x")]) }
        await #expect(throws: SignetClientError(.invalidResponse, status: 201, isRetryable: false)) {
            try await devices().issueCertificate(accessToken: "t")
        }
        #expect(await store.load()?.serialNumber == old.serialNumber)
    }

    @Test("a name of more than 64 characters, or an empty one, is refused before any request")
    func badName() async throws {
        await #expect(throws: SignetClientError(.misuse, isRetryable: false)) {
            try await devices().issueCertificate(accessToken: "t", name: String(repeating: "n", count: 65))
        }
        await #expect(throws: SignetClientError(.misuse, isRetryable: false)) { try await devices().issueCertificate(accessToken: "t", name: "") }
        #expect(provider.requests.isEmpty)
        #expect(await store.keysMade == 0)
    }

    // MARK: initial certificate

    @Test("initialCertificate: POST /devices/initial-certificate {client_id, csr, attestation (base64url), platform}; keeps the chain")
    func initialCertificate() async throws {
        let ca = ca
        provider.answer { seen in
            jsonAnswer(
                201,
                [
                    "instance_id": "initial-1",
                    "certificate_chain": try ca.issue(csr: try #require(seen.json["csr"] as? String), instanceID: "initial-1", validity: 300),
                    "expires_at": Date().timeIntervalSince1970 + 300, "attestation": "none",
                ])
        }
        let initial = try await devices().initialCertificate(attestation: Data([0xfb, 0xff]), platform: .ios)
        #expect(initial.instance.id == "initial-1")
        #expect(initial.attestation == "none")
        #expect((290...300).contains(initial.instance.expiresIn))
        let seen = try #require(provider.requests.first)
        #expect(seen.request.url == ScriptedDeviceProvider.issuer + "/devices/initial-certificate")
        #expect(seen.json["client_id"] as? String == "app")
        #expect(seen.json["attestation"] as? String == "-_8")
        #expect(seen.json["platform"] as? String == "ios")
        #expect(seen.json["instance_id"] == nil)
        #expect(seen.presented == nil)
        #expect(seen.request.header("Authorization") == nil)
        #expect(await store.load()?.instanceID == "initial-1")
    }

    @Test("renewInitialCertificate: the same instance id, over mutual TLS with the current initial certificate, a new key kept")
    func renewInitialCertificate() async throws {
        let current = try await activated("initial-1")
        let ca = ca
        provider.answer { seen in
            jsonAnswer(
                201,
                [
                    "instance_id": "initial-1",
                    "certificate_chain": try ca.issue(csr: try #require(seen.json["csr"] as? String), instanceID: "initial-1", validity: 300),
                ])
        }
        _ = try await devices().renewInitialCertificate()
        let seen = try #require(provider.requests.first)
        #expect(seen.json["instance_id"] as? String == "initial-1")
        #expect(seen.presented?.serialNumber == current.serialNumber)
        let renewed = try #require(await store.load())
        #expect(renewed.serialNumber != current.serialNumber)
        #expect(renewed.key.privateKey.publicKey != current.key.privateKey.publicKey)
        // An answer for another instance is not kept.
        provider.answer { seen in
            jsonAnswer(
                201, ["instance_id": "other", "certificate_chain": try ca.issue(csr: try #require(seen.json["csr"] as? String), instanceID: "other")])
        }
        await #expect(throws: SignetClientError(.responseMismatch, isRetryable: false)) { _ = try await devices().renewInitialCertificate() }
        #expect(await store.load()?.serialNumber == renewed.serialNumber)
    }

    @Test("renewInitialCertificate with an empty store: device_not_activated, nothing sent")
    func renewWithoutCertificate() async throws {
        await #expect(throws: SignetClientError(.deviceNotActivated, isRetryable: false)) { _ = try await devices().renewInitialCertificate() }
        #expect(provider.requests.isEmpty)
    }

    // MARK: status

    @Test("status with no certificate in the store: notActivated without a request")
    func statusWithoutCertificate() async throws {
        #expect(try await devices().status() == .notActivated)
        #expect(provider.requests.isEmpty)
    }

    @Test("status: GET /devices/status over mutual TLS with the stored certificate; 200 activated read into a value; the scope is closed")
    func statusActivated() async throws {
        let credential = try await activated("inst-1")
        provider.answer { _ in
            jsonAnswer(
                200,
                [
                    "status": "activated", "instance_id": "inst-1", "certificate_not_after": 1_790_000_000, "reactivation_due": true,
                    "reactivation_due_at": 1_788_790_400, "attestation": "none", "authenticators": [String](),
                ])
        }
        let status = try await devices().status()
        #expect(
            status
                == .activated(
                    ActivatedDevice(
                        instanceID: "inst-1", certificateNotAfter: Date(timeIntervalSince1970: 1_790_000_000), reactivationDue: true,
                        reactivationDueAt: Date(timeIntervalSince1970: 1_788_790_400), attestation: "none")))
        let seen = try #require(provider.requests.first)
        #expect(seen.request.method == "GET")
        #expect(seen.request.url == ScriptedDeviceProvider.issuer + "/devices/status")
        #expect(seen.request.header("Authorization") == nil)
        #expect(seen.presented?.serialNumber == credential.serialNumber)
        #expect(provider.closedScopes == 1)
    }

    @Test("status maps the documented 401s: device_not_activated, device_revoked (with why), invalid_device_certificate (with why)")
    func statusErrors() async throws {
        _ = try await activated()
        let cases: [(HTTPTransportResponse, DeviceStatus)] = [
            (errorAnswer(401, "device_not_activated"), .notActivated),
            (errorAnswer(401, "device_revoked", "locked"), .revoked(reason: "locked")),
            (errorAnswer(401, "invalid_device_certificate", "expired"), .certificateRejected(reason: "expired")),
            (jsonAnswer(200, ["status": "removed", "instance_id": "i", "certificate_not_after": 1]), .revoked(reason: "removed")),
        ]
        for (answer, expected) in cases {
            provider.answer { _ in answer }
            #expect(try await devices().status() == expected)
        }
        #expect(await store.load() != nil, "a status answer decides nothing about the store: the app does")
    }

    @Test("status throws device_certificate_required, other refusals and unreadable answers, keeping the server's error")
    func statusThrows() async throws {
        _ = try await activated()
        provider.answer { _ in errorAnswer(401, "device_certificate_required") }
        do {
            _ = try await devices().status()
            Issue.record("no certificate presented must throw")
        } catch let error as SignetClientError {
            #expect(error.code == .server)
            #expect(error.serverError?.error == DeviceServerError.certificateRequired)
            #expect(error.status == 401)
        }
        provider.answer { _ in errorAnswer(503, "temporarily_unavailable") }
        await #expect(
            throws: SignetClientError(.server, serverError: OAuthError(.init(rawValue: "temporarily_unavailable")), status: 503, isRetryable: true)
        ) {
            _ = try await devices().status()
        }
        provider.answer { _ in jsonAnswer(200, ["status": "activated"]) }
        await #expect(throws: SignetClientError(.invalidResponse, status: 200, isRetryable: false)) { _ = try await devices().status() }
        provider.answer { _ in throw SignetError(.transportFailure, "handshake failed") }
        await #expect(throws: SignetClientError(.transport, isRetryable: true)) { _ = try await devices().status() }
    }

    // MARK: reactivation

    @Test(
        "reactivate: a new key and CSR to POST /devices/reactivation over mutual TLS with the OLD certificate and the token; the new pair replaces it"
    )
    func reactivate() async throws {
        let old = try await activated("old-instance")
        provider.answer(issuing("new-instance"))
        let record = try await devices().reactivate(accessToken: "fresh-token", name: "Renewed")
        #expect(record.instanceID == "new-instance")
        let seen = try #require(provider.requests.first)
        #expect(seen.request.method == "POST")
        #expect(seen.request.url == ScriptedDeviceProvider.issuer + "/devices/reactivation")
        #expect(seen.request.header("Authorization") == "Bearer fresh-token")
        #expect(seen.presented?.serialNumber == old.serialNumber)
        #expect(seen.json["name"] as? String == "Renewed")
        let csr = try CertificateSigningRequest(pemEncoded: try #require(seen.json["csr"] as? String))
        #expect(csr.publicKey != old.key.privateKey.publicKey)
        let kept = try #require(await store.load())
        #expect(kept.instanceID == "new-instance")
        #expect(kept.key.privateKey.publicKey == csr.publicKey)
    }

    @Test("a refused reactivation keeps the old key and certificate; with none stored it is device_not_activated and nothing is sent")
    func reactivateRefused() async throws {
        await #expect(throws: SignetClientError(.deviceNotActivated, isRetryable: false)) { try await devices().reactivate(accessToken: "t") }
        #expect(provider.requests.isEmpty)
        let old = try await activated()
        provider.answer { _ in errorAnswer(401, "device_revoked", "locked") }
        do {
            try await devices().reactivate(accessToken: "t")
            Issue.record("a refused reactivation must throw")
        } catch let error as SignetClientError {
            #expect(error.serverError?.error == DeviceServerError.revoked)
            #expect(error.serverError?.errorDescription == "locked")
        }
        let kept = try #require(await store.load())
        #expect(kept.serialNumber == old.serialNumber)
        #expect(kept.key.privateKey.publicKey == old.key.privateKey.publicKey)
    }

    // MARK: deactivation

    @Test("deactivate: POST /devices/deactivation over mutual TLS, then the local key and chain are deleted")
    func deactivate() async throws {
        let credential = try await activated("inst-1")
        provider.answer { _ in jsonAnswer(200, ["device": deviceJSON("inst-1", status: "deactivated")]) }
        let outcome = try await devices().deactivate()
        guard case .deactivated(let record) = outcome else { Issue.record("expected deactivated, got \(outcome)"); return }
        #expect(record.status == .deactivated)
        let seen = try #require(provider.requests.first)
        #expect(seen.request.method == "POST")
        #expect(seen.request.url == ScriptedDeviceProvider.issuer + "/devices/deactivation")
        #expect(seen.presented?.serialNumber == credential.serialNumber)
        #expect(await store.load() == nil)
    }

    @Test("deactivate when the provider says device_revoked: alreadyRevoked, and the local pair is deleted all the same")
    func deactivateRevoked() async throws {
        _ = try await activated()
        provider.answer { _ in errorAnswer(401, "device_revoked", "removed") }
        #expect(try await devices().deactivate() == .alreadyRevoked(reason: "removed"))
        #expect(await store.load() == nil)
    }

    @Test("deactivate: any other refusal is thrown and the store kept; with an empty store nothing is sent")
    func deactivateOther() async throws {
        #expect(try await devices().deactivate() == .notActivated)
        #expect(provider.requests.isEmpty)
        _ = try await activated()
        for answer in [
            errorAnswer(401, "invalid_device_certificate", "foreign_issuer"), errorAnswer(500, "server_error"), jsonAnswer(200, ["nothing": true]),
        ] {
            provider.answer { _ in answer }
            await #expect(throws: SignetClientError.self) { _ = try await devices().deactivate() }
            #expect(await store.load() != nil)
        }
    }

    // MARK: the user's devices

    @Test("devices, rename, remove, lock: the documented methods and paths, the token, and the JSON they read")
    func selfService() async throws {
        provider.answer { seen in
            switch (seen.request.method, seen.path) {
            case ("GET", "/devices"): return jsonAnswer(200, ["devices": [deviceJSON("a"), deviceJSON("b", status: "locked")]])
            case ("PATCH", "/devices/a"): return jsonAnswer(200, ["device": deviceJSON("a", name: seen.json["name"] as? String)])
            case ("DELETE", "/devices/a"): return jsonAnswer(200, ["device": deviceJSON("a", status: "removed")])
            case ("POST", "/devices/a/lock"): return jsonAnswer(200, ["device": deviceJSON("a", status: "locked")])
            default: return errorAnswer(404, "not_found")
            }
        }
        let api = devices()
        let list = try await api.devices(accessToken: "t")
        #expect(list.map(\.instanceID) == ["a", "b"])
        #expect(list.map(\.status) == [.activated, .locked])
        #expect(try await api.rename("a", to: "Work phone", accessToken: "t").name == "Work phone")
        #expect(try await api.remove("a", accessToken: "t").status == .removed)
        #expect(try await api.lock("a", accessToken: "t").status == .locked)
        let seen = provider.requests
        #expect(seen.map(\.request.method) == ["GET", "PATCH", "DELETE", "POST"])
        #expect(seen.allSatisfy { $0.request.header("Authorization") == "Bearer t" && $0.presented == nil })
        #expect(seen[1].request.header("Content-Type") == "application/json")
        #expect(seen[1].json["name"] as? String == "Work phone")
    }

    @Test("the user's devices go over mutual TLS when the store holds a certificate (bound tokens), not when it has expired")
    func selfServicePresents() async throws {
        provider.answer { _ in jsonAnswer(200, ["devices": [[String: Any]]()]) }
        let credential = try await activated()
        _ = try await devices().devices(accessToken: "t")
        #expect(provider.requests.last?.presented?.serialNumber == credential.serialNumber)
        let expired = try ca.credential(instanceID: "old", now: Date().addingTimeInterval(-100 * 86400))
        try await store.save(expired.key, certificateChain: expired.certificateChain)
        _ = try await devices().devices(accessToken: "t")
        #expect(provider.requests.last?.presented == nil)
    }

    @Test("self-service errors keep the provider's words; an instance id that is not base64url is refused before any request")
    func selfServiceErrors() async throws {
        provider.answer { _ in errorAnswer(401, "login_required", "log in again to remove a device") }
        do {
            _ = try await devices().remove("a", accessToken: "t")
            Issue.record("a refused removal must throw")
        } catch let error as SignetClientError {
            #expect(error.serverError?.error == .loginRequired)
            #expect(error.status == 401)
        }
        let before = provider.requests.count
        for bad in ["../status", "a/lock", "", "a b", "a?x=1"] {
            await #expect(throws: SignetClientError(.misuse, isRetryable: false)) { _ = try await devices().lock(bad, accessToken: "t") }
        }
        await #expect(throws: SignetClientError(.misuse, isRetryable: false)) {
            _ = try await devices().rename("a", to: String(repeating: "x", count: 65), accessToken: "t")
        }
        #expect(provider.requests.count == before)
    }

    @Test("an http issuer that is not loopback is refused before anything is sent")
    func insecureIssuer() async throws {
        let client = SignetClient(
            configuration: .init(issuer: "http://id.example.com", clientID: "app", redirectURI: "com.example.app:/callback"),
            transport: provider.transport)
        await #expect(throws: SignetClientError(.misuse, isRetryable: false)) {
            _ = try await client.devices(keyStore: store, mutualTLS: provider.mutualTLS).instanceID()
        }
        #expect(provider.requests.isEmpty)
    }
}
