// Request ids, one JSON line per request, and the metrics the admin listener serves.
import Foundation
import Logging
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Operations: request ids, request logs and metrics")
struct ObservabilityTests {
    @Test("every response carries a request id; a stranger's X-Request-Id is replaced, a trusted proxy's kept")
    func requestIDs() async throws {
        try await withTestProvider { provider in
            let plain = try await ScriptedBrowser().get(provider.url("/health/live"))
            let generated = try #require(plain.header("X-Request-Id"))
            #expect(generated.count == 32 && generated.allSatisfy(\.isHexDigit))
            let claimed = try await ScriptedBrowser().get(provider.url("/health/live"), headers: [("X-Request-Id", "from-a-stranger")])
            #expect(claimed.header("X-Request-Id") != "from-a-stranger")
            #expect(claimed.header("X-Request-Id") != generated)
        }
        try await withTestProvider(configure: { $0.trustedProxies = [IPNetwork("127.0.0.1/32")!] }) { provider in
            let kept = try await ScriptedBrowser().get(provider.url("/health/live"), headers: [("X-Request-Id", "edge-4711.a")])
            #expect(kept.header("X-Request-Id") == "edge-4711.a")
            // A trusted proxy's id that could forge a log line is not taken either.
            let forged = try await ScriptedBrowser().get(provider.url("/health/live"), headers: [("X-Request-Id", "x\",\"status\":200")])
            #expect(forged.header("X-Request-Id")?.count == 32)
        }
    }

    @Test("one JSON line per request: time, request id, method, route template, status, duration, client id and address")
    func requestLine() async throws {
        let capture = LogCapture()
        try await withTestProvider(logger: capture.logger(level: .info)) { provider in
            let fixture = try await Fixture.make(provider)
            let (_, tokens) = try await fixture.backendTokens()
            #expect(tokens.status == 200)
            let requestID = try #require(tokens.header("X-Request-Id"))
            let missing = try await ScriptedBrowser().get(provider.url("/nowhere/abc123?code=secret-in-query"))
            #expect(missing.status == 404)
            let lines = capture.objects.filter { $0["message"] as? String == "request" }
            let token = try #require(lines.first { $0["request_id"] as? String == requestID })
            #expect(token["route"] as? String == "/token")
            #expect(token["method"] as? String == "POST")
            #expect(token["status"] as? Int == 200)
            #expect(token["client_id"] as? String == "backend")
            #expect(token["client_address"] as? String == "127.0.0.1")
            #expect((token["duration_ms"] as? Double).map { $0 >= 0 } == true)
            #expect((token["time"] as? String)?.hasSuffix("Z") == true)
            #expect(token["level"] as? String == "info")
            // The route template, never the raw path or the query.
            let notFound = try #require(lines.first { $0["request_id"] as? String == missing.header("X-Request-Id") })
            #expect(notFound["route"] as? String == "NotFound")
            #expect(!capture.text.contains("secret-in-query"))
            #expect(!capture.text.contains("abc123"))
        }
    }

    @Test("/metrics on the admin listener: requests, logins by outcome, tokens by grant, token errors, build info; not on the public port")
    func metrics() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let wrong = try await provider.submitLogin(
                fixture.backendAuthorization, browser: ScriptedBrowser(), username: "alice", password: "wrong password")
            #expect(wrong.status == 401)
            let (_, tokens) = try await fixture.backendTokens()
            #expect(tokens.status == 200)
            let refused = try await ScriptedBrowser().post(
                provider.url("/token"),
                form: [
                    ("grant_type", "authorization_code"), ("code", "no-such-code"), ("redirect_uri", Fixture.backendRedirect),
                    ("code_verifier", String(repeating: "a", count: 43)),
                ]
                    + (try fixture.assertion()))
            #expect(refused.oauthError == "invalid_grant")
            let publicMetrics = try await ScriptedBrowser().get(provider.url("/metrics"))
            #expect(publicMetrics.status == 404)

            let text = try await withRunningService("the admin listener", logger: Logger(label: "test")) { listening in
                buildAdminApplication(
                    metrics: provider.metrics, host: "127.0.0.1", port: 0, logger: Logger(label: "test"), onServerRunning: listening)
            } _: { port in
                let answer = try await ScriptedBrowser().get("http://127.0.0.1:\(port)/metrics")
                #expect(answer.status == 200)
                #expect(answer.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
                return answer.body
            }
            for series in [
                #"signet_http_requests_total{route="/token",method="POST",status="200"} 1"#,
                #"signet_http_requests_total{route="/token",method="POST",status="400"} 1"#,
                #"signet_http_requests_total{route="NotFound",method="GET",status="404"} 1"#,
                #"signet_http_request_duration_seconds_count{route="/token",method="POST"} 2"#,
                #"signet_logins_total{channel="page",outcome="success"} 1"#,
                #"signet_logins_total{channel="page",outcome="wrong_password"} 1"#,
                #"signet_issued_total{kind="code",grant_type="authorization_code",client_id="backend"} 1"#,
                #"signet_issued_total{kind="access_token",grant_type="authorization_code",client_id="backend"} 1"#,
                #"signet_issued_total{kind="id_token",grant_type="authorization_code",client_id="backend"} 1"#,
                #"signet_token_errors_total{error="invalid_grant"} 1"#,
                #"signet_build_info{version="\#(SignetVersion.current)"} 1"#,
            ] {
                #expect(text.contains(series), "missing \(series)")
            }
            // No user ids or names in any label.
            #expect(!text.contains(fixture.user.id))
            #expect(!text.contains("alice"))
        }
    }

    @Test("client_id labels stop at the cap; later clients count as other")
    func clientLabelCap() {
        let metrics = SignetMetrics(maxClientLabels: 2)
        for client in ["one", "two", "three", "one"] { metrics.issued("access_token", grantType: "authorization_code", clientID: client) }
        let text = metrics.exposition()
        #expect(text.contains(#"client_id="one"} 2"#))
        #expect(text.contains(#"client_id="two"} 1"#))
        #expect(text.contains(#"client_id="other"} 1"#))
        #expect(!text.contains("three"))
    }

    @Test("throttle refusals and SMS are counted")
    func throttleAndSMS() async throws {
        try await withTestProvider(configure: { $0.throttle.freeFailuresPerAccount = 1 }) { provider in
            let fixture = try await Fixture.make(provider)
            _ = try await provider.signInTwoFactor(fixture.appAuthorization, username: "alice", password: Fixture.password)
            let browser = ScriptedBrowser()
            for _ in 0..<3 {
                _ = try await provider.submitLogin(fixture.backendAuthorization, browser: browser, username: "alice", password: "wrong")
            }
            let text = provider.metrics.exposition()
            #expect(text.contains(#"signet_throttle_refusals_total{limit="sign_in_failures"}"#))
            #expect(text.contains(#"signet_logins_total{channel="page",outcome="throttled"}"#))
            #expect(text.contains(#"signet_sms_total{result="sent"} 1"#))
        }
    }
}
