// FIDO UAF authenticators on activated devices, and device login (issue 9).
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Authenticators: UAF registration, device login, and every refusal")
struct AuthenticatorTests {
    let instances = DeviceInstanceTests()
    let mutualTLS = MutualTLSTests()
    static let pin = "4711"

    /// The wallet client (native and device login, trusting the test phone's facet), alice, and an
    /// activated device with a fresh bound token of a login with two factors (`twoFactors`) or one.
    func setUp(_ provider: TestProvider, aaids: [String]? = nil, twoFactors: Bool = true) async throws -> (TestUAFPhone, token: String) {
        try await instances.seed(provider)
        try await provider.admin.updateClient(
            id: "wallet", .init(nativeLogin: true, facetIDs: [TestUAFPhone.facet], authenticatorAAIDs: aaids.map { .some($0) }))
        let device = try await mutualTLS.activate(provider)
        return (TestUAFPhone(provider: provider, device: device), try await freshToken(provider, device: device, twoFactors: twoFactors))
    }

    /// A fresh login of alice on the wallet, its code redeemed with the device's certificate.
    func freshToken(_ provider: TestProvider, device: TestDevice, twoFactors: Bool = true, password: String = Fixture.password) async throws -> String
    {
        var authorization = MutualTLSTests.wallet
        authorization.scope = "openid"  // with scope device the nonce would name an instance to activate
        let code =
            twoFactors
            ? try await provider.signInTwoFactor(authorization, username: "alice", password: password)
            : try await provider.signIn(authorization, username: "alice", password: password)
        return try await provider.redeem(code, authorization, clientAuth: [("client_id", "wallet")], browser: device.browser).decode(
            TokenResponse.self
        ).accessToken
    }

    /// A device login's authorization for the wallet.
    var login: TestAuthorization { TestAuthorization(clientID: "wallet", redirectURI: DeviceInstanceTests.redirect, scope: "openid") }

    /// Re-encodes a UAF response text after `change`.
    func tamper(_ text: String, _ change: (inout UAFResponse) throws -> Void) throws -> String {
        var responses = try JSONDecoder().decode([UAFResponse].self, from: Data(text.utf8))
        try change(&responses[0])
        return String(decoding: try JSONEncoder().encode(responses), as: UTF8.self)
    }

    /// Flips one byte of the assertion's TLV at `offset` from its end.
    func flip(_ text: String, fromEnd offset: Int) throws -> String {
        try tamper(text) {
            var bytes = Array(Data(base64URLEncoded: $0.assertions[0].assertion)!)
            bytes[bytes.count - offset] ^= 0x01
            $0.assertions[0].assertion = Data(bytes).base64URLEncodedString()
        }
    }

    @Test(
        "a PIN authenticator registers; a device login with it gives a code redeemed with PKCE and the device certificate: acr loa:2, amr swk pin mfa (no attestation), bound tokens"
    )
    func registerAndLogin() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            let facets = try await ScriptedBrowser().get(provider.url("/uaf/facets/wallet"))
            #expect(facets.header("Content-Type") == "application/fido.trusted-apps+json")
            #expect(((facets.json["trustedFacets"] as? [[String: Any]])?.first?["ids"] as? [String]) == [TestUAFPhone.facet])

            let request = try await phone.registrationRequest(token: token)
            #expect(request.status == 200, "\(request.body)")
            let envelope = try TestUAFPhone.envelope(request)
            #expect(envelope.op == .registration)
            #expect(envelope.lifetimeMillis == 120_000)
            let registration = try JSONDecoder().decode([UAFRegistrationRequest].self, from: Data(envelope.uafRequest.utf8))[0]
            #expect(registration.header.appID == provider.url("/uaf/facets/wallet"))
            #expect(registration.username == "alice")
            #expect(registration.policy.accepted.count == 8)

            let authenticator = TestAuthenticator(aaid: "F1D0#1001")
            let text = try await phone.registrationResponse(envelope, authenticator, pin: Self.pin)
            let registered = try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(text))
            #expect(registered.status == 201, "\(registered.body)")
            let view = try #require(registered.json["authenticator"] as? [String: Any])
            #expect(view["aaid"] as? String == "F1D0#1001")
            #expect(view["key_id"] as? String == authenticator.keyIDText)
            #expect((view["pin"] as? [String: Any])?["state"] as? String == "unlocked")
            let notices = await provider.outbox.messages.map(\.purpose)
            #expect(notices.contains("authenticator.registered"), "the user is told: \(notices)")

            let status = try await phone.device.browser.get(provider.url("/devices/status"))
            #expect((status.json["authenticators"] as? [[String: Any]])?.first?["aaid"] as? String == "F1D0#1001")

            let login = self.login
            let finished = try await phone.login(login, authenticator, pin: Self.pin)
            #expect(finished.status == 200, "\(finished.body)")
            #expect(finished.json["next_step"] as? String == "finished")
            #expect(finished.json["iss"] as? String == provider.issuer)
            let code = try #require(finished.json["authorization_code"] as? String)
            let withoutCertificate = try await provider.redeem(code, login, clientAuth: [("client_id", "wallet")])
            #expect(withoutCertificate.status == 400, "the code of a device login needs the device's certificate")
            let again = try await phone.login(login, authenticator, pin: Self.pin)
            let tokens = try await provider.redeem(
                try #require(again.json["authorization_code"] as? String), login, clientAuth: [("client_id", "wallet")], browser: phone.device.browser
            )
            #expect(tokens.status == 200, "\(tokens.body)")
            let idTokenText = try tokens.decode(TokenResponse.self).idToken
            let idToken = try #require(IDTokenClaims.unverified(idTokenText ?? ""))
            #expect(idToken.acr == "urn:signet:loa:2", "enrolled after a two-factor login")
            #expect(idToken.amr == ["swk", "pin", "mfa"], "the device key is not attested (development verifier): swk, not hwk")
            let access = try #require(AccessTokenClaims.unverified(try tokens.decode(TokenResponse.self).accessToken))
            #expect(access.cnf?.x5tS256 == (try phone.device.thumbprint))
        }
    }

    @Test("a replayed, expired or tampered response is refused, and 50 parallel answers to one challenge make exactly one login")
    func replayAndTampering() async throws {
        let clock = TestClock()
        try await withTestProvider(clock: clock, tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1002")
            #expect(try await phone.register(authenticator, token: token).status == 201)

            // Replay of a registration response.
            let request = try TestUAFPhone.envelope(try await phone.registrationRequest(token: token))
            let second = TestAuthenticator(aaid: "F1D0#1003")
            let text = try await phone.registrationResponse(request, second, pin: nil)
            #expect(try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(text)).status == 201)
            // The same response again: its challenge is spent, which is checked first (UAF 1491,
            // though its KeyID is registered now too).
            let replay = try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(text))
            #expect(replay.status == 400)
            #expect(replay.json["error"] as? String == "uaf_request_used", "\(replay.body)")
            #expect(replay.json["uaf_status_code"] as? Int == 1491)
            // Another answer to the same request: its challenge is spent.
            let otherAnswer = try await phone.registrationResponse(request, TestAuthenticator(aaid: "F1D0#1004"), pin: nil)
            let reused = try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(otherAnswer))
            #expect(reused.json["error"] as? String == "uaf_request_used", "\(reused.body)")

            // Tampered serverData, fcParams, assertion bytes; an expired request. A refusal after
            // the challenge is spent spends it, so each tampered answer is to a request of its own.
            func answer() async throws -> String {
                let start = try await phone.startLogin(login)
                #expect(start.status == 201, "\(start.body)")
                return try await phone.assertion(try TestUAFPhone.request(fromStart: start), authenticator)
            }
            let good = try await answer()
            let badServerData = try tamper(good) {
                let sealed = $0.header.serverData!
                $0.header.serverData = String(sealed.dropLast()) + (sealed.hasSuffix("A") ? "B" : "A")  // always a change
            }
            #expect(try await phone.finish(badServerData).json["error"] as? String == "invalid_uaf_message")
            let badFCParams = try tamper(try await answer()) {
                var params = try JSONDecoder().decode(UAFFinalChallengeParams.self, from: Data(base64URLEncoded: $0.fcParams)!)
                params.challenge = "another"
                $0.fcParams = Data(try JSONEncoder().encode(params)).base64URLEncodedString()
            }
            #expect(try await phone.finish(badFCParams).json["error"] as? String == "invalid_uaf_message")
            let badSignature = try flip(try await answer(), fromEnd: 1)
            #expect(try await phone.finish(badSignature).json["error"] as? String == "invalid_signature")
            let wrongFacet = try tamper(try await answer()) {
                var params = try JSONDecoder().decode(UAFFinalChallengeParams.self, from: Data(base64URLEncoded: $0.fcParams)!)
                params.facetID = "ios:bundle-id:com.evil.app"
                $0.fcParams = Data(try JSONEncoder().encode(params)).base64URLEncodedString()
            }
            #expect(try await phone.finish(wrongFacet).json["error"] as? String == "untrusted_facet")
            let wrongAppID = try tamper(try await answer()) { $0.header.appID = "https://evil.example/facets" }
            #expect(try await phone.finish(wrongAppID).json["error"] as? String == "untrusted_facet")
            let mustUnderstand = try tamper(try await answer()) {
                $0.header.exts = [UAFMessageExtension(id: "x-unknown", data: "", failIfUnknown: true)]
            }
            #expect(mustUnderstand.contains("fail_if_unknown"), "the spec's member name")
            #expect(try await phone.finish(mustUnderstand).json["error"] as? String == "invalid_uaf_message")

            // 50 parallel copies of the right answer: exactly one login.
            let outcomes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { try await phone.finish(good).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == 200 }.count == 1, "\(outcomes)")
            #expect(try await phone.finish(good).json["error"] as? String == "uaf_request_used")

            let late = try TestUAFPhone.request(fromStart: try await phone.startLogin(login))
            clock.advance(by: 121)
            let expired = try await phone.finish(try await phone.assertion(late, authenticator))
            #expect(expired.json["error"] as? String == "uaf_request_expired")
            #expect(expired.json["uaf_status_code"] as? Int == 1491)
        }
    }

    @Test("the client's policy: an AAID outside it, a tampered KRD, a PIN authenticator without its PIN key, a fourth authenticator")
    func registrationPolicy() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider, aaids: ["F1D0#1002", "F1D0#1003", "F1D0#1004", "F1D0#1001"])
            try await provider.admin.updateClient(
                id: "wallet", .init(authenticatorAAIDs: .some(["F1D0#1002", "F1D0#1003", "F1D0#1004", "F1D0#1001"])))
            let outside = try await phone.register(TestAuthenticator(aaid: "F1D0#0002"), token: token)
            #expect(outside.status == 403)
            #expect(outside.json["error"] as? String == "unacceptable_authenticator")

            // A KRD changed after the key signed it.
            let request = try TestUAFPhone.envelope(try await phone.registrationRequest(token: token))
            let text = try await phone.registrationResponse(request, TestAuthenticator(aaid: "F1D0#1002"), pin: nil)
            let tamperedKRD = try tamper(text) {
                var bytes = Array(Data(base64URLEncoded: $0.assertions[0].assertion)!)
                // Inside the KeyID's value: assertion header 4, KRD header 4, AAID 13, assertion info 11,
                // final challenge hash 36, KeyID header 4 bytes, so byte 80 is the KeyID's 9th.
                bytes[80] ^= 0x01
                $0.assertions[0].assertion = Data(bytes).base64URLEncodedString()
            }
            let refused = try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(tamperedKRD))
            #expect(refused.status == 401, "\(refused.body)")
            #expect(refused.json["error"] as? String == "invalid_signature", "the surrogate signature covers the KRD: \(refused.body)")
            // The challenge is checked and spent before the content: the untampered answer to
            // that request comes too late, and a new request registers.
            let late = try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(text))
            #expect(late.json["error"] as? String == "uaf_request_used", "the refusal spent the challenge: \(late.body)")
            #expect(try await phone.register(TestAuthenticator(aaid: "F1D0#1002"), token: token).status == 201)

            // A PIN authenticator without its PIN key is refused.
            let noPIN = try await phone.register(TestAuthenticator(aaid: "F1D0#1001"), token: token)
            #expect(noPIN.json["error"] as? String == "invalid_uaf_message", "\(noPIN.body)")

            let same = TestAuthenticator(aaid: "F1D0#1003")
            #expect(try await phone.register(same, token: token).status == 201)
            #expect(try await phone.register(TestAuthenticator(aaid: "F1D0#1004"), token: token).status == 201)
            let fourth = try await phone.register(TestAuthenticator(aaid: "F1D0#1001"), pin: Self.pin, token: token)
            #expect(fourth.status == 409)
            #expect(fourth.json["error"] as? String == "authenticator_limit")
        }
    }

    @Test("three parallel registrations on a device with two free slots store exactly two")
    func parallelRegistrations() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            #expect(try await phone.register(TestAuthenticator(aaid: "F1D0#1002"), token: token).status == 201)
            var texts: [String] = []
            for aaid in ["F1D0#1003", "F1D0#1004", "F1D0#0002"] {
                let request = try TestUAFPhone.envelope(try await phone.registrationRequest(token: token))
                texts.append(try await phone.registrationResponse(request, TestAuthenticator(aaid: aaid), pin: nil))
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for text in texts { group.addTask { try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(text)).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.sorted() == [201, 201, 409], "\(statuses)")
            #expect(try await provider.store.authenticators(instanceID: phone.device.instanceID).count == 3)
        }
    }

    @Test("a counter that goes backwards flags the authenticator as cloned and locks its device; a transaction must be confirmed as sent")
    func counterAndTransaction() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1003")
            #expect(try await phone.register(authenticator, token: token).status == 201)

            // Transaction confirmation: the text shown must be the text sent.
            let withText = try await phone.startLogin(login, extra: ["transaction_text": "Pay 100 EUR to Bob"])
            let request = try TestUAFPhone.request(fromStart: withText)
            let parsed = try UAFClientRequests.authentication(request)
            #expect(parsed.transaction?.first?.contentType == "text/plain")
            let unconfirmed = try await phone.finish(try await phone.assertion(request, authenticator, confirm: false))
            #expect(unconfirmed.json["error"] as? String == "transaction_mismatch")
            let confirmed = try await phone.finish(
                try await phone.assertion(
                    try TestUAFPhone.request(fromStart: try await phone.startLogin(login, extra: ["transaction_text": "Pay 100 EUR to Bob"])),
                    authenticator))
            #expect(confirmed.status == 200, "\(confirmed.body)")

            // Counter regression.
            let ok = try await phone.login(login, authenticator)
            #expect(ok.status == 200)
            let start = try TestUAFPhone.request(fromStart: try await phone.startLogin(login))
            let cloned = try await phone.finish(try await phone.assertion(start, authenticator, counter: 1))
            #expect(cloned.status == 403)
            #expect(cloned.json["error"] as? String == "authenticator_revoked")
            // Whoever answered holds the device's TLS key too: the device is locked, its grants end.
            let after = try await phone.login(login, authenticator)
            #expect(after.json["error"] as? String == "device_revoked", "\(after.body)")
            #expect(try await provider.store.device(instanceID: phone.device.instanceID)?.revocationReason == .locked)
        }
    }

    @Test("another device's or user's authenticator, a removed one, and a locked device are refused")
    func ownership() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1002")
            #expect(try await phone.register(authenticator, token: token).status == 201)
            let otherDevice = try await mutualTLS.activate(provider)
            let other = TestUAFPhone(provider: provider, device: otherDevice)
            let otherToken = try await freshToken(provider, device: otherDevice)
            let otherAuthenticator = TestAuthenticator(aaid: "F1D0#1003")
            #expect(try await other.register(otherAuthenticator, token: otherToken).status == 201)

            // The first device answers with the second device's authenticator.
            let request = try TestUAFPhone.request(fromStart: try await phone.startLogin(login))
            let foreign = try await phone.finish(try await phone.assertion(request, otherAuthenticator))
            #expect(foreign.json["error"] as? String == "unknown_authenticator", "\(foreign.body)")
            // The second device sends the first device's response (its serverData names the first).
            let mine = try await phone.assertion(try TestUAFPhone.request(fromStart: try await phone.startLogin(login)), authenticator)
            let relayed = try await phone.finish(mine, browser: otherDevice.browser)
            #expect(relayed.json["error"] as? String == "invalid_uaf_message")

            // Removed by the user from the other device.
            let removal = try await otherDevice.browser.send(
                "DELETE", provider.url("/devices/\(phone.device.instanceID)/authenticators/\(authenticator.keyIDText)"), body: nil,
                headers: [("Authorization", "Bearer \(otherToken)")])
            #expect(removal.status == 200, "\(removal.body)")
            let gone = try await phone.login(login, authenticator)
            #expect(gone.json["error"] as? String == "no_authenticator")

            // Locking a device removes its authenticators.
            let lock = try await phone.device.browser.send(
                "POST", provider.url("/devices/\(otherDevice.instanceID)/lock"), body: nil, headers: [("Authorization", "Bearer \(token)")])
            #expect(lock.status == 200, "\(lock.body)")
            #expect(try await provider.store.authenticators(instanceID: otherDevice.instanceID).isEmpty)
            let locked = try await other.startLogin(login)
            #expect(locked.status == 401)
            #expect(locked.json["error"] as? String == "device_revoked")
        }
    }

    @Test(
        "the PIN schedule, server-side with an injected clock: 3rd wrong PIN 60 s, 4th 180 s, 5th removes the authenticator; cool-downs check nothing"
    )
    func pinSchedule() async throws {
        let clock = TestClock()
        try await withTestProvider(clock: clock, tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1001")
            #expect(try await phone.register(authenticator, pin: Self.pin, token: token).status == 201)
            func attempt(_ pin: String) async throws -> ScriptedResponse { try await phone.login(login, authenticator, pin: pin) }

            let first = try await attempt("0000")
            #expect(first.status == 401)
            #expect(first.json["error"] as? String == "wrong_pin")
            #expect((first.json["pin"] as? [String: Any])?["remaining_tries"] as? Int == 4)
            #expect(try await attempt("1111").json["error"] as? String == "wrong_pin")
            let third = try await attempt("2222")
            #expect(third.json["retry_after"] as? Int == 60, "\(third.body)")
            #expect(third.header("Retry-After") == "60")
            // During the cool-down even the right PIN is not checked.
            let cooling = try await attempt(Self.pin)
            #expect(cooling.status == 429)
            #expect(cooling.json["error"] as? String == "pin_cool_down")
            clock.advance(by: 61)
            let fourth = try await attempt("3333")
            #expect(fourth.json["retry_after"] as? Int == 180)
            clock.advance(by: 181)
            let fifth = try await attempt("4444")
            #expect(fifth.status == 403)
            #expect(fifth.json["error"] as? String == "pin_locked_out")
            #expect(try await provider.store.authenticators(instanceID: phone.device.instanceID).isEmpty, "removed server-side")
            let after = try await attempt(Self.pin)
            #expect(after.json["error"] as? String == "no_authenticator", "then device login fails with a clear error: \(after.body)")
        }
    }

    @Test("a right PIN resets the count; parallel wrong PINs are each counted and none passes a cool-down")
    func pinResetAndParallel() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1001")
            #expect(try await phone.register(authenticator, pin: Self.pin, token: token).status == 201)
            // This authenticator keeps no counter (0, as Nevis' do), so answers may arrive in any order.
            #expect(try await phone.login(login, authenticator, pin: "9999", counter: 0).json["error"] as? String == "wrong_pin")
            #expect(try await phone.login(login, authenticator, pin: Self.pin, counter: 0).status == 200)
            let alice = try await provider.store.user(username: "alice")
            let stored = try await provider.store.authenticator(userID: alice?.id ?? "", keyID: authenticator.keyIDText)
            #expect(stored != nil)
            #expect(stored?.pinFailures == 0)

            // Ten wrong guesses prepared, then sent at once: two are counted, the third starts the
            // cool-down, the rest check nothing.
            var texts: [String] = []
            for _ in 0..<10 {
                texts.append(
                    try await phone.assertion(
                        try TestUAFPhone.request(fromStart: try await phone.startLogin(login)), authenticator, pin: "0000", counter: 0))
            }
            let errors = try await withThrowingTaskGroup(of: String.self) { group in
                for text in texts { group.addTask { try await phone.finish(text).json["error"] as? String ?? "none" } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(errors.filter { $0 == "wrong_pin" }.count == 3, "\(errors)")
            #expect(errors.filter { $0 == "pin_cool_down" }.count == 7, "\(errors)")
        }
    }

    @Test("changing the PIN needs the old one; deregistration from the app removes what it names")
    func changePINAndDeregister() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1001")
            #expect(try await phone.register(authenticator, pin: Self.pin, token: token).status == 201)
            let body = "{\"key_id\": \"\(authenticator.keyIDText)\"}"
            let wrongOld = try await phone.postJSON("/uaf/pin/change/request", body)
            #expect(wrongOld.status == 200, "\(wrongOld.body)")
            let saved = authenticator.pin
            let refused = try await phone.postJSON(
                "/uaf/pin/change/response",
                try TestUAFPhone.send(try await phone.assertion(try TestUAFPhone.envelope(wrongOld), authenticator, pin: "0000", newPIN: "2468")))
            #expect(refused.json["error"] as? String == "wrong_pin")
            authenticator.pin = saved
            let request = try await phone.postJSON("/uaf/pin/change/request", body)
            let changed = try await phone.postJSON(
                "/uaf/pin/change/response",
                try TestUAFPhone.send(try await phone.assertion(try TestUAFPhone.envelope(request), authenticator, pin: Self.pin, newPIN: "2468")))
            #expect(changed.status == 200, "\(changed.body)")
            #expect(try await phone.login(login, authenticator, pin: "2468").status == 200)
            #expect(try await phone.login(login, authenticator, pin: Self.pin).json["error"] as? String == "wrong_pin")

            let second = TestAuthenticator(aaid: "F1D0#1002")
            #expect(try await phone.register(second, token: token).status == 201)
            let deregistration = try await phone.postJSON("/uaf/deregistration", "{\"key_ids\": [\"\(second.keyIDText)\"]}")
            #expect(deregistration.status == 200, "\(deregistration.body)")
            let envelope = try TestUAFPhone.envelope(deregistration)
            #expect(envelope.op == .deregistration)
            let message = try JSONDecoder().decode([UAFDeregistrationRequest].self, from: Data(envelope.uafRequest.utf8))[0]
            #expect(message.authenticators == [UAFDeregisterAuthenticator(aaid: "F1D0#1002", keyID: second.keyIDText)])
            #expect(try await provider.store.authenticators(instanceID: phone.device.instanceID).map(\.aaid) == ["F1D0#1001"])
            let unknown = try await phone.postJSON("/uaf/deregistration", "{\"key_ids\": [\"\(second.keyIDText)\"]}")
            #expect(unknown.json["error"] as? String == "unknown_authenticator")
        }
    }

    @Test("an authenticator enrolled after a one-factor login logs in at loa:1 only, and is not offered when two factors are required")
    func oneFactorEnrolment() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider, twoFactors: false)
            let authenticator = TestAuthenticator(aaid: "F1D0#1003")
            #expect(try await phone.register(authenticator, token: token).status == 201)
            let login = self.login
            let finished = try await phone.login(login, authenticator)
            let tokens = try await provider.redeem(
                try #require(finished.json["authorization_code"] as? String), login, clientAuth: [("client_id", "wallet")],
                browser: phone.device.browser)
            let idToken = try #require(IDTokenClaims.unverified(try tokens.decode(TokenResponse.self).idToken ?? ""))
            #expect(idToken.acr == "urn:signet:loa:1", "a password alone enrolled it: no more than one factor")
            #expect(idToken.amr == ["swk", "face"], "and no mfa either")
            let stepUp = try await phone.startLogin(self.login, extra: ["acr_values": "urn:signet:loa:2"])
            #expect(stepUp.status == 409)
            #expect(stepUp.json["error"] as? String == "no_authenticator")
            // The client's minimum raised between start and finish: the finish refuses, and says why.
            let started = try TestUAFPhone.request(fromStart: try await phone.startLogin(self.login))
            try await provider.admin.updateClient(id: "wallet", .init(minimumACR: .some("urn:signet:loa:2")))
            let refused = try await phone.finish(try await phone.assertion(started, authenticator))
            #expect(refused.status == 403)
            #expect(refused.json["error"] as? String == "insufficient_user_authentication", "\(refused.body)")
        }
    }

    @Test("a new password ends the authenticators registered before it: the next device login is refused and they are gone")
    func passwordChangeEndsAuthenticators() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1002")
            #expect(try await phone.register(authenticator, token: token).status == 201)
            // A started login, then the password changes before it is answered.
            let started = try TestUAFPhone.request(fromStart: try await phone.startLogin(login))
            try await provider.admin.setPassword(username: "alice", password: "a brand new password 123")
            let answer = try await phone.finish(try await phone.assertion(started, authenticator))
            #expect(answer.json["error"] as? String == "unknown_authenticator", "\(answer.body)")
            #expect(try await provider.store.authenticators(instanceID: phone.device.instanceID).isEmpty)
            #expect(try await phone.startLogin(login).json["error"] as? String == "no_authenticator")

            // Another ended authenticator does not hold its slot: the same AAID registers again at once.
            let newPassword = "a brand new password 123"
            #expect(
                try await phone.register(
                    TestAuthenticator(aaid: "F1D0#1003"), token: try await freshToken(provider, device: phone.device, password: newPassword)
                ).status == 201)
            try await provider.admin.setPassword(username: "alice", password: "yet another password 456")
            let again = try await phone.register(
                TestAuthenticator(aaid: "F1D0#1003"),
                token: try await freshToken(provider, device: phone.device, password: "yet another password 456"))
            #expect(again.status == 201, "\(again.body)")
        }
    }

    @Test("registration needs the device's certificate and a fresh login of its user; the device login needs the certificate")
    func registrationNeedsLogin() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, _) = try await setUp(provider)
            let noToken = try await phone.postJSON("/uaf/registration/request", "{}")
            #expect(noToken.status == 401)
            let noCertificate = try await phone.postJSON("/uaf/registration/request", "{}", browser: ScriptedBrowser())
            #expect(noCertificate.json["error"] as? String == "device_certificate_required")
            let start = try await phone.postJSON("/login/device/start", "{}", browser: ScriptedBrowser())
            #expect(start.json["error"] as? String == "device_certificate_required")
            let noAuthenticator = try await phone.startLogin(login)
            #expect(noAuthenticator.status == 409)
            #expect(noAuthenticator.json["error"] as? String == "no_authenticator")
        }
    }
}

/// Reads UAF requests in tests (the SDK's parsing).
enum UAFClientRequests {
    static func authentication(_ envelope: UAFReturnRequest) throws -> UAFAuthenticationRequest {
        try JSONDecoder().decode([UAFAuthenticationRequest].self, from: Data(envelope.uafRequest.utf8))[0]
    }
}
