import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

@Suite("Health: liveness and readiness")
struct HealthTests {
    @Test(
        "/health/live answers 200 with the version; /health/ready 200 when the store and keys are there, 503 with a reason when the store does not answer"
    )
    func liveAndReady() async throws {
        let store = GatedStore()
        try await withTestProvider(store: store) { provider in
            let live = try await ScriptedBrowser().get(provider.url("/health/live"))
            #expect(live.status == 200)
            #expect(live.json["status"] as? String == "live")
            #expect(live.json["version"] as? String == SignetVersion.current)
            let ready = try await ScriptedBrowser().get(provider.url("/health/ready"))
            #expect(ready.status == 200)
            #expect(ready.json["status"] as? String == "ready")
            #expect(ready.header("Cache-Control") == "no-store")

            store.failReadiness.set(true)
            let down = try await ScriptedBrowser().get(provider.url("/health/ready"))
            #expect(down.status == 503)
            #expect(down.json["status"] as? String == "unavailable")
            #expect((down.json["reason"] as? String)?.contains("does not answer") == true)
            #expect(try await ScriptedBrowser().get(provider.url("/health/live")).status == 200, "the process still answers")
            store.failReadiness.set(false)
            #expect(try await ScriptedBrowser().get(provider.url("/health/ready")).status == 200)
        }
    }
}
