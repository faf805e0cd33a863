// Mutual TLS for devices: certificates authenticate device endpoints and bind tokens (issue 8, RFC 8705).
import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing
import X509

@Suite("Devices: mutual TLS, certificate-bound tokens and the device lifecycle")
struct MutualTLSTests {
    let instances = DeviceInstanceTests()
    let activation = DeviceActivationTests()
    static let wallet = TestAuthorization(clientID: "wallet", redirectURI: DeviceInstanceTests.redirect, scope: "openid device")

    /// Activates a new installation of the wallet for alice.
    func activate(_ provider: TestProvider, name: String? = nil) async throws -> TestDevice {
        let device = try await provider.activateDevice(
            clientID: "wallet", redirectURI: DeviceInstanceTests.redirect, username: "alice", password: Fixture.password, name: name)
        #expect(DeviceCertificateAuthority.instanceID(of: try device.certificate) == device.instanceID)
        return device
    }

    /// A login of alice on the wallet whose code is redeemed by `browser` (a device presents its certificate there).
    func login(_ provider: TestProvider, redeemedBy browser: ScriptedBrowser = ScriptedBrowser(), scope: String = "openid") async throws
        -> TokenResponse
    {
        var authorization = Self.wallet
        authorization.scope = scope
        let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
        let answer = try await provider.redeem(code, authorization, clientAuth: [("client_id", "wallet")], browser: browser)
        #expect(answer.status == 200, "\(answer.body)")
        return try answer.decode(TokenResponse.self)
    }

    func refresh(_ provider: TestProvider, _ refreshToken: String?, by browser: ScriptedBrowser) async throws -> ScriptedResponse {
        try await browser.post(
            provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken ?? ""), ("client_id", "wallet")])
    }

    func userInfo(_ provider: TestProvider, _ token: String, by browser: ScriptedBrowser) async throws -> ScriptedResponse {
        try await browser.get(provider.url("/userinfo"), headers: [("Authorization", "Bearer \(token)")])
    }

    @Test(
        "over mutual TLS: status answers the device; tokens redeemed with its certificate carry cnf.x5t#S256 and attestation; /userinfo and refresh need that certificate"
    )
    func boundTokens() async throws {
        try await withTestProvider(tls: true) { provider in
            try await instances.seed(provider)
            let discovery = try await ScriptedBrowser().get(provider.url("/.well-known/openid-configuration"))
            #expect(discovery.json["tls_client_certificate_bound_access_tokens"] as? Bool == true)
            let device = try await activate(provider, name: "Alice's iPhone")
            // A name a listing would show other than stored (a line break, a reversal) is refused.
            let misleading = await #expect(throws: SignetError.self) {
                try await provider.activateDevice(
                    clientID: "wallet", redirectURI: DeviceInstanceTests.redirect, username: "alice", password: Fixture.password,
                    name: "Alice\u{2028}\u{202E}enohPi")
            }
            #expect(misleading?.reason.contains("activation failed: 400") == true, "\(String(describing: misleading))")

            let status = try await device.browser.get(provider.url("/devices/status"))
            #expect(status.status == 200, "\(status.body)")
            #expect(status.json["status"] as? String == "activated")
            #expect(status.json["instance_id"] as? String == device.instanceID)
            #expect(status.json["reactivation_due"] as? Bool == false)
            #expect(status.json["attestation"] as? String == "none")
            let anonymous = try await ScriptedBrowser().get(provider.url("/devices/status"))
            #expect(anonymous.status == 401)
            #expect(anonymous.json["error"] as? String == "device_certificate_required")

            let tokens = try await login(provider, redeemedBy: device.browser)
            let claims = try #require(AccessTokenClaims.unverified(tokens.accessToken))
            #expect(claims.cnf?.x5tS256 == (try device.thumbprint))
            #expect(claims.attestation == "none")
            #expect(tokens.tokenType == "Bearer")
            #expect(try await userInfo(provider, tokens.accessToken, by: device.browser).status == 200)
            let stolen = try await userInfo(provider, tokens.accessToken, by: ScriptedBrowser())
            #expect(stolen.status == 401, "a bound token without its certificate")
            #expect(stolen.header("WWW-Authenticate")?.contains("invalid_token") == true)
            let other = try await activate(provider)
            #expect(try await userInfo(provider, tokens.accessToken, by: other.browser).status == 401, "with another device's certificate")

            let withoutCertificate = try await refresh(provider, tokens.refreshToken, by: ScriptedBrowser())
            #expect(withoutCertificate.status == 400)
            #expect(withoutCertificate.json["error"] as? String == "invalid_grant")
            #expect(try await refresh(provider, tokens.refreshToken, by: other.browser).status == 400, "another device cannot refresh it")
            let refreshed = try await refresh(provider, tokens.refreshToken, by: device.browser)
            #expect(refreshed.status == 200, "the refresh token was not spent by the refused attempts: \(refreshed.body)")
            // The spent token sent again without the certificate (a copy off the phone) is
            // refused as a reuse would be, and ends nothing; the device's sign-in lives on.
            #expect(try await refresh(provider, tokens.refreshToken, by: ScriptedBrowser()).json["error"] as? String == "invalid_grant")
            #expect(try await refresh(provider, tokens.refreshToken, by: other.browser).json["error"] as? String == "invalid_grant")
            #expect(try await provider.store.auditEvents(AuditQuery()).filter { $0.kind == "grant.revoked" }.isEmpty)
            let renewed = try #require(AccessTokenClaims.unverified(try refreshed.decode(TokenResponse.self).accessToken))
            #expect(renewed.cnf?.x5tS256 == (try device.thumbprint))

            // At /revoke as at /token: a copy without the certificate, or with another device's,
            // gets the same 200 and ends nothing; the device itself ends its sign-in.
            let current = try refreshed.decode(TokenResponse.self)
            let currentRefresh = try #require(current.refreshToken)
            func revoke(_ token: String, by browser: ScriptedBrowser) async throws -> ScriptedResponse {
                try await browser.post(provider.url("/revoke"), form: [("token", token), ("client_id", "wallet")])
            }
            for (token, browser) in [
                (currentRefresh, ScriptedBrowser()), (currentRefresh, other.browser), (current.accessToken, ScriptedBrowser()),
                (current.accessToken, other.browser),
            ] {
                #expect(try await revoke(token, by: browser).status == 200)
            }
            #expect(try await userInfo(provider, current.accessToken, by: device.browser).status == 200, "no copy ended the device's sign-in")
            #expect(try await revoke(currentRefresh, by: device.browser).status == 200)
            #expect(try await userInfo(provider, current.accessToken, by: device.browser).status == 401)

            // The activation's own login, tied to the device once activated: its first access
            // token was issued unbound, yet ends that grant only from the device.
            let activationToken = try #require(device.activationAccessToken)
            #expect(try await userInfo(provider, activationToken, by: ScriptedBrowser()).status == 200)
            #expect(try await revoke(activationToken, by: ScriptedBrowser()).status == 200)
            #expect(try await userInfo(provider, activationToken, by: ScriptedBrowser()).status == 200, "a copy of it ended nothing")
            #expect(try await revoke(activationToken, by: device.browser).status == 200)
            #expect(try await userInfo(provider, activationToken, by: ScriptedBrowser()).status == 401)

            // A login redeemed without a certificate gets unbound tokens, as before.
            let plain = try await login(provider)
            #expect(AccessTokenClaims.unverified(plain.accessToken)?.cnf == nil)
            #expect(try await userInfo(provider, plain.accessToken, by: ScriptedBrowser()).status == 200)
        }
    }

    @Test("device endpoints refuse a foreign CA's certificate, an expired one, and an unreadable proxy value, each with its own error")
    func refusedCertificates() async throws {
        let clock = TestClock()
        try await withTestProvider(clock: clock, tls: true) { provider in
            try await instances.seed(provider)
            let device = try await activate(provider)
            // The same instance id and shape, from a CA of the attacker's own.
            let foreignCA = try DeviceCertificateAuthority.make(name: "Signet", validity: 86_400 * 365, now: clock.now)
            let forged = try foreignCA.issue(csrPEM: try DeviceActivationTests.csr(device.key), instanceID: device.instanceID, now: clock.now)
            let forgedBrowser = ScriptedBrowser(
                tls: try TestTLS.client(presenting: [try DeviceCertificateAuthority.pem(of: forged)], key: device.key))
            let foreign = try await forgedBrowser.get(provider.url("/devices/status"))
            #expect(foreign.status == 401)
            #expect(foreign.json["error"] as? String == "invalid_device_certificate")
            #expect((foreign.json["error_description"] as? String)?.contains("foreign_issuer") == true)

            clock.advance(by: provider.configuration.deviceCertificateValidity + 60)
            let expired = try await device.browser.get(provider.url("/devices/status"))
            #expect(expired.status == 401)
            #expect((expired.json["error_description"] as? String)?.contains("expired") == true)
        }
    }

    @Test("deactivation revokes the certificate, the device's grants and its bound tokens at once; certificate-status says revoked")
    func deactivation() async throws {
        try await withTestProvider(tls: true) { provider in
            try await instances.seed(provider)
            let device = try await activate(provider)
            let tokens = try await login(provider, redeemedBy: device.browser)
            let answer = try await device.browser.post(provider.url("/devices/deactivation"), form: [])
            #expect(answer.status == 200, "\(answer.body)")
            #expect((answer.json["device"] as? [String: Any])?["status"] as? String == "deactivated")
            let status = try await device.browser.get(provider.url("/devices/status"))
            #expect(status.status == 401)
            #expect(status.json["error"] as? String == "device_revoked")
            #expect(try await userInfo(provider, tokens.accessToken, by: device.browser).status == 401, "the bound token dies with the device")
            let refreshed = try await refresh(provider, tokens.refreshToken, by: device.browser)
            #expect(refreshed.status == 400)
            #expect(refreshed.json["error"] as? String == "invalid_grant")
            let serial = try device.certificate.serialNumber.bytes.hexEncodedString()
            let certificateStatus = try await ScriptedBrowser().get(provider.url("/devices/certificate-status?serial=\(serial)"))
            #expect(certificateStatus.json["status"] as? String == "revoked")
            #expect(certificateStatus.json["reason"] as? String == "deactivated")
            let unknown = try await ScriptedBrowser().get(provider.url("/devices/certificate-status?serial=0abc"))
            #expect(unknown.json["status"] as? String == "unknown")
            let malformed = try await ScriptedBrowser().get(provider.url("/devices/certificate-status?serial=xyz"))
            #expect(malformed.status == 400)
            let again = try await device.browser.post(provider.url("/devices/deactivation"), form: [])
            #expect(again.status == 401)
            // The trail holds the logins and tokens too; the device's own events are these two.
            let events = try await provider.store.auditEvents(userID: try #require(try await provider.store.user(username: "alice")).id, limit: 20)
                .filter { $0.kind.hasPrefix("device.") }
            #expect(events.map(\.kind) == ["device.deactivated", "device.activated"])
            #expect(events.first?.actor == "device")
        }
    }

    @Test(
        "lost device: a fresh login elsewhere locks it (certificate, grants, tokens at once; the user is told); an old login must log in again; another user's device is not found"
    )
    func lock() async throws {
        let clock = TestClock()
        try await withTestProvider(clock: clock, tls: true) { provider in
            try await instances.seed(provider)
            _ = try await provider.admin.addUser(username: "bob", password: Fixture.password)
            let device = try await activate(provider, name: "Alice's iPhone")
            let bound = try await login(provider, redeemedBy: device.browser)
            let elsewhere = try await login(provider)

            let list = try await ScriptedBrowser().get(provider.url("/devices"), headers: [("Authorization", "Bearer \(elsewhere.accessToken)")])
            #expect(list.status == 200, "\(list.body)")
            let listed = try #require((list.json["devices"] as? [[String: Any]])?.first)
            #expect(listed["name"] as? String == "Alice's iPhone")
            #expect(listed["platform"] as? String == "ios")
            #expect(listed["last_used_at"] as? Int != nil, "the device was used over mutual TLS")

            let renamed = try await ScriptedBrowser().send(
                "PATCH", provider.url("/devices/\(device.instanceID)"), body: #"{"name":"Old phone"}"#,
                headers: [("Authorization", "Bearer \(elsewhere.accessToken)"), ("Content-Type", "application/json")])
            #expect(renamed.status == 200, "\(renamed.body)")
            #expect((renamed.json["device"] as? [String: Any])?["name"] as? String == "Old phone")
            let badName = try await ScriptedBrowser().send(
                "PATCH", provider.url("/devices/\(device.instanceID)"), body: #"{"name":"\u0007"}"#,
                headers: [("Authorization", "Bearer \(elsewhere.accessToken)"), ("Content-Type", "application/json")])
            #expect(badName.status == 400)

            var bobLogin = Self.wallet
            bobLogin.scope = "openid"
            let bobCode = try await provider.signIn(bobLogin, username: "bob", password: Fixture.password)
            let bob = try await provider.redeem(bobCode, bobLogin, clientAuth: [("client_id", "wallet")]).decode(TokenResponse.self)
            let foreign = try await ScriptedBrowser().post(
                provider.url("/devices/\(device.instanceID)/lock"), form: [], headers: [("Authorization", "Bearer \(bob.accessToken)")])
            #expect(foreign.status == 404, "another user's device is answered as unknown")

            clock.advance(by: 11 * 60)
            let stale = try await ScriptedBrowser().post(
                provider.url("/devices/\(device.instanceID)/lock"), form: [],
                headers: [("Authorization", "Bearer \(try await tokensAfterRefresh(provider, elsewhere))")])
            #expect(stale.status == 401)
            #expect(stale.header("WWW-Authenticate")?.contains("insufficient_user_authentication") == true)
            #expect(stale.header("WWW-Authenticate")?.contains("max_age") == true)

            let fresh = try await login(provider)
            let locked = try await ScriptedBrowser().post(
                provider.url("/devices/\(device.instanceID)/lock"), form: [], headers: [("Authorization", "Bearer \(fresh.accessToken)")])
            #expect(locked.status == 200, "\(locked.body)")
            #expect((locked.json["device"] as? [String: Any])?["status"] as? String == "locked")
            #expect(try await device.browser.get(provider.url("/devices/status")).json["error"] as? String == "device_revoked")
            #expect(try await userInfo(provider, bound.accessToken, by: device.browser).status == 401)
            #expect(try await refresh(provider, bound.refreshToken, by: device.browser).status == 400)
            let notices = await provider.outbox.messages.map(\.purpose)
            #expect(notices.contains("device.locked"))
            let alice = try #require(try await provider.store.user(username: "alice"))
            let kinds = try await provider.store.auditEvents(userID: alice.id, limit: 10).map(\.kind)
            #expect(kinds.first == "device.locked")
            #expect(kinds.contains("device.activated"))
        }
    }

    /// An access token of the same grant, refreshed now (so it is valid but its login is old).
    func tokensAfterRefresh(_ provider: TestProvider, _ tokens: TokenResponse) async throws -> String {
        let refreshed = try await refresh(provider, tokens.refreshToken, by: ScriptedBrowser())
        #expect(refreshed.status == 200, "\(refreshed.body)")
        return try refreshed.decode(TokenResponse.self).accessToken
    }

    @Test("reactivation: a fresh login bound to a new instance id, with the old certificate, gives a new certificate; the old one is revoked at once")
    func reactivation() async throws {
        try await withTestProvider(tls: true) { provider in
            try await instances.seed(provider)
            let old = try await activate(provider)
            let instance = try await instances.newInstance(provider)
            let token = try await activation.deviceToken(provider, instance: instance)
            let key = P256.Signing.PrivateKey()
            let withoutCertificate = try await activation.activate(
                provider, token: token, body: try DeviceActivationTests.csr(key), path: "/devices/reactivation")
            #expect(withoutCertificate.status == 401)
            #expect(withoutCertificate.json["error"] as? String == "device_certificate_required")
            let answer = try await old.browser.send(
                "POST", provider.url("/devices/reactivation"), body: try DeviceActivationTests.csr(key),
                headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/pem-certificate-chain")])
            #expect(answer.status == 201, "\(answer.body)")
            let chain = try #require(answer.json["certificate_chain"] as? [String])
            #expect(DeviceCertificateAuthority.instanceID(of: try Certificate(pemEncoded: chain[0])) == instance)
            let new = ScriptedBrowser(tls: try TestTLS.client(presenting: chain, key: key))
            #expect(try await new.get(provider.url("/devices/status")).json["status"] as? String == "activated")
            let oldStatus = try await old.browser.get(provider.url("/devices/status"))
            #expect(oldStatus.json["error"] as? String == "device_revoked")
            #expect((oldStatus.json["error_description"] as? String)?.contains("replaced") == true)
            #expect(try await provider.store.device(instanceID: old.instanceID)?.replacedBy == instance)
        }
    }

    @Test(
        "reactivation with a login made over the old certificate: the login moves to the new device and lives on; only the new certificate refreshes it"
    )
    func reactivationKeepsItsLogin() async throws {
        try await withTestProvider(tls: true) { provider in
            try await instances.seed(provider)
            let old = try await activate(provider)
            let instance = try await instances.newInstance(provider)
            var authorization = Self.wallet
            authorization.scope = "openid device"
            authorization.nonce = instance
            let code = try await provider.signIn(authorization, username: "alice", password: Fixture.password)
            // Redeemed over mutual TLS with the old certificate, as an activated app redeems every code.
            let tokens = try await provider.redeem(code, authorization, clientAuth: [("client_id", "wallet")], browser: old.browser).decode(
                TokenResponse.self)
            let key = P256.Signing.PrivateKey()
            let answer = try await old.browser.send(
                "POST", provider.url("/devices/reactivation"), body: try DeviceActivationTests.csr(key),
                headers: [("Authorization", "Bearer \(tokens.accessToken)"), ("Content-Type", "application/pem-certificate-chain")])
            #expect(answer.status == 201, "\(answer.body)")
            let chain = try #require(answer.json["certificate_chain"] as? [String])
            let new = ScriptedBrowser(tls: try TestTLS.client(presenting: chain, key: key))
            let claims = try #require(AccessTokenClaims.unverified(tokens.accessToken))
            let grant = try #require(try await provider.store.grant(id: claims.grantID))
            #expect(grant.deviceID == instance, "the fresh login belongs to the new device")
            #expect(grant.revokedAt == nil)
            let refreshed = try await refresh(provider, tokens.refreshToken, by: new)
            #expect(refreshed.status == 200, "the new certificate refreshes the login: \(refreshed.body)")
            #expect(
                try await refresh(provider, try refreshed.decode(TokenResponse.self).refreshToken, by: old.browser).status == 400,
                "the old one no longer")
            // The same token cannot reactivate again: it is bound to the old certificate (and its instance is spent).
            let again = try await new.send(
                "POST", provider.url("/devices/reactivation"), body: try DeviceActivationTests.csr(),
                headers: [("Authorization", "Bearer \(tokens.accessToken)"), ("Content-Type", "application/pem-certificate-chain")])
            #expect(again.status == 401)
            #expect(again.header("WWW-Authenticate")?.contains("invalid_token") == true)

            // A lock of the id the user knows reaches the device that replaced it.
            let fresh = try await login(provider)
            let locked = try await ScriptedBrowser().post(
                provider.url("/devices/\(old.instanceID)/lock"), form: [], headers: [("Authorization", "Bearer \(fresh.accessToken)")])
            #expect(locked.status == 200, "\(locked.body)")
            #expect((locked.json["device"] as? [String: Any])?["instance_id"] as? String == instance)
            #expect((locked.json["device"] as? [String: Any])?["status"] as? String == "locked")
            #expect(try await new.get(provider.url("/devices/status")).json["error"] as? String == "device_revoked")
        }
    }

    @Test("device management takes tokens for Signet alone: a token that also names an API cannot list, lock or remove devices")
    func managementNeedsProviderAudience() async throws {
        try await withTestProvider(tls: true) { provider in
            try await instances.seed(provider)
            let device = try await activate(provider)
            _ = try await provider.admin.updateClient(id: "wallet", .init(resources: ["https://api.example.com"]))
            let tokens = try await login(provider)
            #expect(AccessTokenClaims.unverified(tokens.accessToken)?.aud.contains("https://api.example.com") == true)
            let headers = [("Authorization", "Bearer \(tokens.accessToken)")]
            let list = try await ScriptedBrowser().get(provider.url("/devices"), headers: headers)
            #expect(list.status == 401)
            #expect(list.header("WWW-Authenticate")?.contains("invalid_token") == true)
            #expect(try await ScriptedBrowser().post(provider.url("/devices/\(device.instanceID)/lock"), form: [], headers: headers).status == 401)
            #expect(
                try await ScriptedBrowser().send("DELETE", provider.url("/devices/\(device.instanceID)"), body: nil, headers: headers).status == 401)
            #expect(try await provider.store.device(instanceID: device.instanceID)?.revokedAt == nil, "nothing was changed")
        }
    }

    @Test(
        "initial certificate: minutes long, for a new instance with attestation none; it authenticates no device endpoint; a swap needs the current one; activation keeps its attestation only for the attested key over its initial certificate"
    )
    func initialCertificate() async throws {
        struct Vouching: AttestationVerifier {
            func verify(_ evidence: AttestationEvidence) async throws -> AttestationResult {
                guard let attestation = evidence.attestation else { return .none }
                guard attestation == Array("good".utf8) else { throw AttestationRefusal("not a genuine app") }
                return AttestationResult(kind: "test-attestation")
            }
        }
        try await withTestProvider(tls: true, attestationVerifier: Vouching()) { provider in
            try await instances.seed(provider)
            let key = P256.Signing.PrivateKey()
            func request(_ body: [String: String], by browser: ScriptedBrowser = ScriptedBrowser()) async throws -> ScriptedResponse {
                try await browser.send(
                    "POST", provider.url("/devices/initial-certificate"), body: String(decoding: try JSONEncoder().encode(body), as: UTF8.self),
                    headers: [("Content-Type", "application/json")])
            }
            let csr = try DeviceActivationTests.csr(key)
            let refused = try await request(["client_id": "wallet", "csr": csr, "attestation": Data("bad".utf8).base64URLEncodedString()])
            #expect(refused.status == 400)
            #expect((refused.json["error_description"] as? String)?.contains("not a genuine app") == true)
            #expect(try await request(["client_id": "plain", "csr": csr]).status == 400, "a client without the scope device")
            #expect(
                try await request(["client_id": "wallet", "csr": "not a csr", "attestation": Data("good".utf8).base64URLEncodedString()]).status
                    == 400)

            let answer = try await request(["client_id": "wallet", "csr": csr, "attestation": Data("good".utf8).base64URLEncodedString()])
            #expect(answer.status == 201, "\(answer.body)")
            #expect(answer.json["attestation"] as? String == "test-attestation")
            let instance = try #require(answer.json["instance_id"] as? String)
            let chain = try #require(answer.json["certificate_chain"] as? [String])
            let certificate = try Certificate(pemEncoded: chain[0])
            #expect(
                certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore) <= provider.configuration.initialCertificateValidity
                    + DeviceCertificateAuthority.clockSkew)
            let initial = ScriptedBrowser(tls: try TestTLS.client(presenting: chain, key: key))
            let status = try await initial.get(provider.url("/devices/status"))
            #expect(status.status == 401)
            #expect(status.json["error"] as? String == "device_not_activated")

            let swapKey = P256.Signing.PrivateKey()
            let swapBody = [
                "client_id": "wallet", "csr": try DeviceActivationTests.csr(swapKey), "instance_id": instance,
                "attestation": Data("good".utf8).base64URLEncodedString(),
            ]
            #expect(try await request(swapBody).status == 401, "a swap without the current certificate")
            var unvouched = swapBody
            unvouched["attestation"] = nil
            let downgrade = try await request(unvouched, by: initial)
            #expect(downgrade.status == 400, "a swapped key must be vouched for as the first was")
            #expect((downgrade.json["error_description"] as? String)?.contains("is not the instance's") == true, "\(downgrade.body)")
            let swapped = try await request(swapBody, by: initial)
            #expect(swapped.status == 201, "\(swapped.body)")
            #expect(swapped.json["instance_id"] as? String == instance)

            // The first login then activates that instance over mutual TLS with its initial
            // certificate, certifying that certificate's key: the device keeps the attestation.
            let swappedChain = try #require(swapped.json["certificate_chain"] as? [String])
            let swappedInitial = ScriptedBrowser(tls: try TestTLS.client(presenting: swappedChain, key: swapKey))
            let token = try await activation.deviceToken(provider, instance: instance)
            let activated = try await swappedInitial.send(
                "POST", provider.url("/devices/activation"), body: try DeviceActivationTests.csr(swapKey),
                headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/pem-certificate-chain")])
            #expect(activated.status == 201, "\(activated.body)")
            #expect((activated.json["device"] as? [String: Any])?["attestation"] as? String == "test-attestation")

            // An attested instance id lends nothing to a key made elsewhere: activated with another
            // key, or without its initial certificate, the device says none.
            let other = try await request([
                "client_id": "wallet", "csr": try DeviceActivationTests.csr(), "attestation": Data("good".utf8).base64URLEncodedString(),
            ])
            let otherInstance = try #require(other.json["instance_id"] as? String)
            let otherToken = try await activation.deviceToken(provider, instance: otherInstance)
            let foreignKey = try await activation.activate(provider, token: otherToken, body: try DeviceActivationTests.csr())
            #expect(foreignKey.status == 201, "\(foreignKey.body)")
            #expect((foreignKey.json["device"] as? [String: Any])?["attestation"] as? String == "none")
        }
    }

    @Test("behind a trusted proxy the certificate header is verified like a TLS certificate; from an untrusted peer it is ignored")
    func proxyHeader() async throws {
        let instances = self.instances
        try await withTestProvider(configure: {
            $0.trustedProxies = [IPNetwork("127.0.0.1/32")!]
            $0.clientCertificateHeader = "X-SSL-Client-Cert"
        }) { provider in
            try await instances.seed(provider)
            let activated = try await activate(provider)
            let escaped = try #require(activated.chain[0].addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let status = try await ScriptedBrowser().get(provider.url("/devices/status"), headers: [("X-SSL-Client-Cert", escaped)])
            #expect(status.status == 200, "\(status.body)")
            let mangled = try await ScriptedBrowser().get(provider.url("/devices/status"), headers: [("X-SSL-Client-Cert", "%%%")])
            #expect(mangled.json["error"] as? String == "invalid_device_certificate")
            let none = try await ScriptedBrowser().get(provider.url("/devices/status"))
            #expect(none.json["error"] as? String == "device_certificate_required")
        }
        try await withTestProvider(configure: {
            $0.trustedProxies = [IPNetwork("10.0.0.0/8")!]
            $0.clientCertificateHeader = "X-SSL-Client-Cert"
        }) { provider in
            try await instances.seed(provider)
            let activated = try await activate(provider)
            let escaped = try #require(activated.chain[0].addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let forged = try await ScriptedBrowser().get(provider.url("/devices/status"), headers: [("X-SSL-Client-Cert", escaped)])
            #expect(forged.status == 401)
            #expect(forged.json["error"] as? String == "device_certificate_required", "the header of a peer that is no trusted proxy is ignored")
        }
    }
}
