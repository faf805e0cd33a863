import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing

/// A database that cannot be reached for a while (PostgreSQL restarting) is answered with 503 and
/// `Retry-After` on every kind of endpoint, nothing is spent meanwhile, and the same requests
/// work once it is back.
@Suite("Storage outage: 503 with Retry-After, then the same requests work")
struct StorageOutageTests {
    @Test("/token answers 503 temporarily_unavailable with Retry-After, the code is not spent, and redeems once the database is back")
    func tokenEndpoint() async throws {
        let store = GatedStore()
        try await withTestProvider(store: store) { provider in
            let fixture = try await Fixture.make(provider)
            let (authorization, code) = try await fixture.backendCode()
            store.outage.set(true)
            let down = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            #expect(down.status == 503)
            #expect(down.oauthError == "temporarily_unavailable")
            #expect(down.header("Retry-After") == "5")
            #expect(down.header("Cache-Control") == "no-store")
            store.outage.set(false)
            let back = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            #expect(back.status == 200, "\(back.body)")
        }
    }

    @Test("the hosted page, the native login API and readiness answer 503 while the database is away, and work again after")
    func otherEndpoints() async throws {
        let store = GatedStore()
        try await withTestProvider(store: store) { provider in
            let fixture = try await Fixture.make(provider)
            let authorization = fixture.appAuthorization
            store.outage.set(true)
            let page = try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer), headers: [("Accept", "text/html")])
            #expect(page.status == 503)
            #expect(page.header("Retry-After") == "5")
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.header("X-Frame-Options") == "DENY")

            let native = try await ScriptedBrowser().send(
                "POST", provider.url("/login/native/start"),
                body:
                    #"{"client_id":"app","redirect_uri":"com.example.app:/callback","scope":"openid","code_challenge":"\#(authorization.challenge)","code_challenge_method":"S256"}"#,
                headers: [("Content-Type", "application/json")])
            #expect(native.status == 503)
            #expect(native.json["error"] as? String == "temporarily_unavailable")
            #expect(native.json["retryable"] as? Bool == true)
            #expect(native.header("Retry-After") == "5")

            let ready = try await ScriptedBrowser().get(provider.url("/health/ready"))
            #expect(ready.status == 503)
            #expect((ready.json["reason"] as? String)?.contains("cannot be reached") == true)

            store.outage.set(false)
            #expect(try await ScriptedBrowser().get(authorization.url(issuer: provider.issuer)).status == 200)
            #expect(try await ScriptedBrowser().get(provider.url("/health/ready")).status == 200)
        }
    }
}
