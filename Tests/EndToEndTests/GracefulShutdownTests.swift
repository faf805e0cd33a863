// SIGTERM under load: requests in flight finish, then the process exits 0.
import Foundation
import SignetCore
import SignetScript
import SignetTesting
import Testing

@Suite("Operations: graceful shutdown")
struct GracefulShutdownTests {
    @Test("SIGTERM while logins are being checked: every accepted request gets its whole answer, then exit 0")
    func sigtermUnderLoad() async throws {
        let data = try SignetCommand.dataFolder()
        // bcrypt cost 12: each password check takes about a quarter of a second, and five of the account's
        // eight run at once, so every request has arrived and most are being checked when the signal comes.
        let server = try ServeProcess(data: data, extra: ["--password-hash-cost", "12", "--shutdown-grace-period", "30"])
        #expect(try await server.waitUntilReady())
        let seed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: data + "/demo.json"))) as? [String: Any])
        let username = try #require(seed["username"] as? String), password = try #require(seed["password"] as? String)
        let base = "http://127.0.0.1:\(server.port)"
        let authorization = TestAuthorization(clientID: "demo-app", redirectURI: "dev.signet.demo.app:/callback", scope: "openid")

        // Each browser opens its login page first, so the signal finds only password checks running.
        var forms: [(ScriptedBrowser, (authorization: String, csrfToken: String))] = []
        for _ in 0..<8 {
            let browser = ScriptedBrowser()
            let page = try await browser.get(authorization.url(issuer: base))
            forms.append((browser, try #require(LoginForm.fields(in: page.body))))
        }
        let answers = try await withThrowingTaskGroup(of: ScriptedResponse.self) { group in
            for (browser, fields) in forms {
                group.addTask {
                    try await browser.post(
                        base + "/login",
                        form: [
                            ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", username), ("password", password),
                        ])
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            server.process.terminate()  // SIGTERM
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Every login sent before the signal was answered in full: a redirect with its code.
        #expect(answers.count == 8)
        for answer in answers {
            #expect(answer.status == 303, "\(answer.status) \(answer.body.prefix(200))")
            #expect(answer.locationParameters?["code"] != nil)
        }
        server.process.waitUntilExit()
        #expect(server.process.terminationStatus == 0)
        // Nothing new is accepted once it has stopped.
        await #expect(throws: (any Error).self) { _ = try await ScriptedBrowser().get(base + "/health/live") }
    }
}
