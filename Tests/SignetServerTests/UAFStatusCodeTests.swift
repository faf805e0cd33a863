// The UAF status code of every refusal, as UAF 1.1's status table and the FIDO UAF server
// conformance tests have them: UAF clients act on the code (1481 and 1493 delete the key).
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("UAF status codes: the challenge first (1491), content (1498), policy (1492), revoked (1493), unknown KeyID (1481)")
struct UAFStatusCodeTests {
    let base = AuthenticatorTests()

    /// Expects a refusal with this HTTP status, Signet `error` and UAF status code.
    func expectRefusal(
        _ response: ScriptedResponse, _ status: Int, _ error: String, uaf: Int, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(comment): \(response.body)", sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, "\(comment): \(response.body)", sourceLocation: sourceLocation)
        #expect(response.json["uaf_status_code"] as? Int == uaf, "\(comment): \(response.body)", sourceLocation: sourceLocation)
    }

    /// A started device login's answer by `authenticator`.
    func answer(_ phone: TestUAFPhone, _ authenticator: TestAuthenticator) async throws -> String {
        let start = try await phone.startLogin(base.login)
        try #require(start.status == 201, "\(start.body)")
        return try await phone.assertion(try TestUAFPhone.request(fromStart: start), authenticator)
    }

    @Test(
        "1491: a challenge missing, not made here, for another device, mismatched in fcParams, expired or answered before; an unknown one spends nothing"
    )
    func requestInvalid() async throws {
        let clock = TestClock()
        try await withTestProvider(clock: clock, tls: true) { provider in
            let (phone, token) = try await base.setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1002")
            #expect(try await phone.register(authenticator, token: token).status == 201)

            let good = try await answer(phone, authenticator)
            let missing = try base.tamper(good) { $0.header.serverData = nil }
            expectRefusal(try await phone.finish(missing), 400, "invalid_uaf_message", uaf: 1491, "serverData missing")
            let forged = try base.tamper(good) {
                let sealed = $0.header.serverData!
                $0.header.serverData = String(sealed.dropLast()) + (sealed.hasSuffix("A") ? "B" : "A")
            }
            expectRefusal(try await phone.finish(forged), 400, "invalid_uaf_message", uaf: 1491, "serverData not made here")
            expectRefusal(
                try await phone.finish(try base.tamper(good) { $0.header.serverData = "nonsense" }), 400, "invalid_uaf_message", uaf: 1491,
                "serverData malformed")
            // Another device of the same user sends this device's answer.
            let otherDevice = try await base.mutualTLS.activate(provider)
            expectRefusal(
                try await phone.finish(good, browser: otherDevice.browser), 400, "invalid_uaf_message", uaf: 1491, "another device's challenge")
            // None of those spent the challenge: the answer itself still logs in, once.
            #expect(try await phone.finish(good).status == 200)
            expectRefusal(try await phone.finish(good), 400, "uaf_request_used", uaf: 1491, "the same answer again")

            // fcParams naming another challenge than serverData's.
            let mismatched = try base.tamper(try await answer(phone, authenticator)) {
                var params = try JSONDecoder().decode(UAFFinalChallengeParams.self, from: Data(base64URLEncoded: $0.fcParams)!)
                params.challenge = "another"
                $0.fcParams = Data(try JSONEncoder().encode(params)).base64URLEncodedString()
            }
            expectRefusal(try await phone.finish(mismatched), 400, "invalid_uaf_message", uaf: 1491, "fcParams challenge mismatched")

            // Expired: 1491 (not 1408), with Signet's own error beside it.
            let late = try await answer(phone, authenticator)
            clock.advance(by: 121)
            expectRefusal(try await phone.finish(late), 400, "uaf_request_expired", uaf: 1491, "expired")

            // A registration answered twice: the spent challenge is told, not the KeyID registered meanwhile.
            let request = try TestUAFPhone.envelope(
                try await phone.registrationRequest(token: try await base.freshToken(provider, device: phone.device)))
            let text = try await phone.registrationResponse(request, TestAuthenticator(aaid: "F1D0#1003"), pin: nil)
            #expect(try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(text)).status == 201)
            expectRefusal(
                try await phone.postJSON("/uaf/registration/response", try TestUAFPhone.send(text)), 400, "uaf_request_used", uaf: 1491,
                "registration replayed")
        }
    }

    @Test(
        "1498: a malformed message or assertion, a hash, appID or facet that does not match, another version, scheme or AAID, a KeyID taken, a bad signature"
    )
    func unacceptableContent() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await base.setUp(provider)
            let authenticator = TestAuthenticator(aaid: "F1D0#1002")
            #expect(try await phone.register(authenticator, token: token).status == 201)

            // Not even a UAF message: nothing names a challenge.
            expectRefusal(
                try await phone.postJSON("/login/device/finish", #"{"uafResponse": "[]"}"#), 400, "invalid_uaf_message", uaf: 1498, "no response")
            expectRefusal(
                try await phone.postJSON("/login/device/finish", #"{"uafResponse": "{}"}"#), 400, "invalid_uaf_message", uaf: 1498, "no array")
            expectRefusal(try await phone.postJSON("/login/device/finish", #"{"other": 1}"#), 400, "invalid_uaf_message", uaf: 1498, "no uafResponse")

            let cases: [(String, Int, String, (inout UAFResponse) throws -> Void)] = [
                ("another version", 400, "invalid_uaf_message", { $0.header.upv = UAFVersion(major: 1, minor: 0) }),
                ("another scheme", 403, "unacceptable_authenticator", { $0.assertions[0].assertionScheme = "UAFV2TLV" }),
                ("appID in the header", 403, "untrusted_facet", { $0.header.appID = "https://evil.example/facets" }),
                (
                    "a truncated assertion", 400, "invalid_uaf_message",
                    {
                        let bytes = Array(Data(base64URLEncoded: $0.assertions[0].assertion)!)
                        $0.assertions[0].assertion = Data(bytes.dropLast(3)).base64URLEncodedString()
                    }
                ),
                ("an assertion that is no base64url", 400, "invalid_uaf_message", { $0.assertions[0].assertion = "***" }),
                ("two assertions", 400, "invalid_uaf_message", { $0.assertions.append($0.assertions[0]) }),
                (
                    "a bad signature", 401, "invalid_signature",
                    {
                        var bytes = Array(Data(base64URLEncoded: $0.assertions[0].assertion)!)
                        bytes[bytes.count - 1] ^= 0x01
                        $0.assertions[0].assertion = Data(bytes).base64URLEncodedString()
                    }
                ),
                // The same challenge, other fcParams text: TAG_FINAL_CHALLENGE_HASH no longer its hash.
                (
                    "a final challenge hash that does not match", 400, "invalid_uaf_message",
                    {
                        $0.fcParams = (Data(base64URLEncoded: $0.fcParams)! + Data(" ".utf8)).base64URLEncodedString()
                    }
                ),
                (
                    "fcParams naming another appID", 403, "untrusted_facet",
                    {
                        var params = try JSONDecoder().decode(UAFFinalChallengeParams.self, from: Data(base64URLEncoded: $0.fcParams)!)
                        params.appID = "https://evil.example/facets"
                        $0.fcParams = Data(try JSONEncoder().encode(params)).base64URLEncodedString()
                    }
                ),
                (
                    "a facet the client does not trust", 403, "untrusted_facet",
                    {
                        var params = try JSONDecoder().decode(UAFFinalChallengeParams.self, from: Data(base64URLEncoded: $0.fcParams)!)
                        params.facetID = "ios:bundle-id:com.evil.app"
                        $0.fcParams = Data(try JSONEncoder().encode(params)).base64URLEncodedString()
                    }
                ),
            ]
            for (label, status, error, change) in cases {
                expectRefusal(
                    try await phone.finish(try base.tamper(try await answer(phone, authenticator), change)), status, error, uaf: 1498, label)
            }

            // An AAID other than the one registered with this KeyID (both in the client's policy).
            let liar = TestAuthenticator(aaid: "F1D0#1003", keyOf: authenticator)
            expectRefusal(try await phone.finish(try await answer(phone, liar)), 403, "unacceptable_authenticator", uaf: 1498, "another AAID")
            authenticator.counter = liar.counter

            // A KeyID registered already, under another AAID.
            let copy = TestAuthenticator(aaid: "F1D0#1004", keyOf: authenticator)
            expectRefusal(try await phone.register(copy, token: token), 409, "unacceptable_authenticator", uaf: 1498, "KeyID taken")

            // The registered authenticator still logs in: content refusals changed nothing stored.
            #expect(try await phone.login(base.login, authenticator).status == 200)
        }
    }

    @Test("1492: an AAID outside the client's policy, at registration and at login, and a device with the most authenticators it may hold")
    func unacceptableAuthenticator() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await base.setUp(provider, aaids: ["F1D0#1002", "F1D0#1003", "F1D0#1004"])
            expectRefusal(
                try await phone.register(TestAuthenticator(aaid: "F1D0#0002"), token: token), 403, "unacceptable_authenticator", uaf: 1492,
                "AAID outside")
            let kept = TestAuthenticator(aaid: "F1D0#1002")
            for authenticator in [kept, TestAuthenticator(aaid: "F1D0#1003"), TestAuthenticator(aaid: "F1D0#1004")] {
                #expect(try await phone.register(authenticator, token: token).status == 201)
            }
            try await provider.admin.updateClient(
                id: "wallet", .init(authenticatorAAIDs: .some(["F1D0#1002", "F1D0#1003", "F1D0#1004", "F1D0#1001"])))
            expectRefusal(
                try await phone.postJSON("/uaf/registration/request", "{}", token: token), 409, "authenticator_limit", uaf: 1492, "device full")

            // Answered for an AAID the client stopped accepting between request and answer.
            let started = try await answer(phone, kept)
            try await provider.admin.updateClient(id: "wallet", .init(authenticatorAAIDs: .some(["F1D0#1003", "F1D0#1004"])))
            expectRefusal(try await phone.finish(started), 403, "unacceptable_authenticator", uaf: 1492, "no longer in the policy")
        }
    }

    @Test("1493: an authenticator whose counter went back is revoked")
    func revokedAuthenticator() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await base.setUp(provider)
            let counted = TestAuthenticator(aaid: "F1D0#1003")
            #expect(try await phone.register(counted, token: token).status == 201)
            #expect(try await phone.login(base.login, counted).status == 200)
            let start = try TestUAFPhone.request(fromStart: try await phone.startLogin(base.login))
            expectRefusal(
                try await phone.finish(try await phone.assertion(start, counted, counter: 1)), 403, "authenticator_revoked", uaf: 1493, "cloned")
        }
    }

    @Test("1493: the last wrong PIN removes the authenticator (each before it is 1401)")
    func lockedOut() async throws {
        let clock = TestClock()
        try await withTestProvider(clock: clock, tls: true) { provider in
            let (phone, token) = try await base.setUp(provider)
            let pinned = TestAuthenticator(aaid: "F1D0#1001")
            #expect(try await phone.register(pinned, pin: AuthenticatorTests.pin, token: token).status == 201)
            var answers: [ScriptedResponse] = []
            for _ in 0..<5 {
                answers.append(try await phone.login(base.login, pinned, pin: "0000"))
                clock.advance(by: 600)
            }
            expectRefusal(answers[0], 401, "wrong_pin", uaf: 1401, "a wrong PIN")
            expectRefusal(answers[4], 403, "pin_locked_out", uaf: 1493, "locked out")
        }
    }

    @Test("1481: a KeyID not registered on this device, at login and at deregistration; no authenticator to log in with")
    func unknownKeyID() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await base.setUp(provider)
            expectRefusal(try await phone.startLogin(base.login), 409, "no_authenticator", uaf: 1481, "none registered")
            let registered = TestAuthenticator(aaid: "F1D0#1002")
            #expect(try await phone.register(registered, token: token).status == 201)
            let stranger = TestAuthenticator(aaid: "F1D0#1002")
            expectRefusal(try await phone.finish(try await answer(phone, stranger)), 401, "unknown_authenticator", uaf: 1481, "unknown KeyID")
            expectRefusal(
                try await phone.postJSON("/uaf/deregistration", "{\"key_ids\": [\"\(stranger.keyIDText)\"]}"), 401, "unknown_authenticator",
                uaf: 1481, "deregistering an unknown KeyID")
        }
    }
}
