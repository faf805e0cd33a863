// The operator's commands: signet audit, clients import|export, --output json.
import Foundation
import SignetCore
import SignetScript
import SignetTesting
import Testing

@Suite("Operations: audit, clients as code, JSON output")
struct OperationsCommandTests {
    @Test("signet audit shows a login, a failed login and a client change; filters by user, client and time; JSON output")
    func audit() async throws {
        let data = try SignetCommand.dataFolder()
        let server = try ServeProcess(data: data)
        #expect(try await server.waitUntilReady())
        let seed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: data + "/demo.json"))) as? [String: Any])
        let username = try #require(seed["username"] as? String), password = try #require(seed["password"] as? String)
        let authorization = TestAuthorization(clientID: "demo-app", redirectURI: "dev.signet.demo.app:/callback", scope: "openid")
        let url = try #require(URL(string: authorization.url(issuer: "http://127.0.0.1:\(server.port)")))
        let browser = ScriptedBrowser()
        let page = try await browser.get(url.absoluteString)
        let fields = try #require(LoginForm.fields(in: page.body))
        let failed = try await browser.post(
            "http://127.0.0.1:\(server.port)/login",
            form: [
                ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", username), ("password", "not the password"),
            ])
        #expect(failed.status == 401)
        let succeeded = try await LoginForm.redirect(for: url, username: username, password: password)
        #expect(succeeded.absoluteString.contains("code="))
        _ = server.stop()
        #expect(try SignetCommand.run(["clients", "update", "demo-app", "--name", "Renamed", "--data-dir", data]).status == 0)

        let text = try SignetCommand.run(["audit", "--data-dir", data])
        #expect(text.status == 0, "\(text.all)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.first?.contains("client.updated  actor=admin  client=demo-app") == true)
        #expect(lines.contains { $0.contains("login.succeeded  actor=user") && $0.contains("client=demo-app") })
        #expect(lines.contains { $0.contains("login.failed  actor=user") && $0.contains("reason=page wrong_password") })

        let json = try SignetCommand.run(["audit", "--data-dir", data, "--user", username, "--output", "json"])
        let events = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(events.contains { $0["kind"] as? String == "login.succeeded" })
        #expect(!events.contains { $0["kind"] as? String == "client.updated" })
        let byClient = try SignetCommand.run(["audit", "--data-dir", data, "--client", "demo-bank", "--output", "json"])
        let bank = try #require(try JSONSerialization.jsonObject(with: Data(byClient.stdout.utf8)) as? [[String: Any]])
        #expect(bank.map { $0["kind"] as? String } == ["client.added"])
        let future = try SignetCommand.run(["audit", "--data-dir", data, "--since", "2999-01-01T00:00:00Z"])
        #expect(future.stdout.contains("No events."))
        let recent = try SignetCommand.run(["audit", "--data-dir", data, "--since", "1h", "--limit", "1"])
        #expect(recent.stdout.split(separator: "\n").count == 1)
        #expect(try SignetCommand.run(["audit", "--data-dir", data, "--since", "last week"]).status != 0)
        #expect(try SignetCommand.run(["audit", "--data-dir", data, "--user", "nobody"]).status != 0)
    }

    @Test("clients export then import into a fresh store gives the same registrations; one bad entry imports nothing")
    func clientsAsCode() throws {
        let source = try SignetCommand.dataFolder()
        #expect(
            try SignetCommand.run([
                "clients", "add", "web", "--name", "Web", "--auth-method", "client_secret_basic", "--redirect-uri", "https://web.example.com/cb",
                "--data-dir", source,
            ]).status == 0)
        #expect(
            try SignetCommand.run([
                "clients", "add", "app", "--name", "App", "--auth-method", "none", "--redirect-uri", "com.example.app:/cb", "--native-login",
                "--data-dir", source,
            ]).status == 0)
        let file = source + "/clients.json"
        let exported = try SignetCommand.run(["clients", "export", file, "--data-dir", source])
        #expect(exported.status == 0, "\(exported.all)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains(#""token_endpoint_auth_method" : "client_secret_basic""#))
        #expect(text.contains(#""signet_native_login" : true"#))
        #expect(!text.contains("secret_hash"))

        let target = try SignetCommand.dataFolder()
        let imported = try SignetCommand.run(["clients", "import", file, "--data-dir", target])
        #expect(imported.status == 0, "\(imported.all)")
        #expect(imported.stdout.contains("added\tweb\tclient_secret "))
        #expect(imported.stdout.contains("added\tapp") && !imported.stdout.contains("added\tapp\tclient_secret"))
        let again = try SignetCommand.run(["clients", "export", "-", "--data-dir", target]).stdout
        let strip = { (json: String) throws -> [[String: String]] in
            let list = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
            return list.map { $0.filter { $0.key != "client_id_issued_at" }.mapValues { "\($0)" } }
        }
        #expect(try strip(again) == strip(text))
        // Importing the same file replaces, keeping the secret.
        let replaced = try SignetCommand.run(["clients", "import", file, "--data-dir", target])
        #expect(replaced.stdout.contains("replaced\tweb") && !replaced.stdout.contains("client_secret"))

        let bad = source + "/bad.json"
        try
            #"[{"client_id":"good","redirect_uris":["https://good.example.com/cb"]},{"client_id":"evil","redirect_uris":["http://evil.example.com/cb"]}]"#
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try SignetCommand.run(["clients", "import", bad, "--data-dir", target])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("invalid_redirect_uri: entry 2 (evil)"))
        #expect(!(try SignetCommand.run(["clients", "list", "--data-dir", target]).stdout.contains("good")))
    }

    @Test("clients, users and keys list as JSON; clients show; users show and update")
    func jsonOutput() throws {
        let data = try SignetCommand.dataFolder()
        #expect(
            try SignetCommand.run([
                "clients", "add", "web", "--name", "Web", "--auth-method", "none", "--redirect-uri", "https://web.example.com/cb", "--data-dir", data,
            ]).status == 0)
        #expect(
            try SignetCommand.run(
                ["users", "add", "alice", "--password-stdin", "--password-hash-cost", "4", "--data-dir", data], input: "pw 123456\n"
            ).status == 0)
        let clients =
            try JSONSerialization.jsonObject(
                with: Data(try SignetCommand.run(["clients", "list", "--output", "json", "--data-dir", data]).stdout.utf8)) as? [[String: Any]]
        #expect(clients?.first?["client_id"] as? String == "web")
        let shown =
            try JSONSerialization.jsonObject(with: Data(try SignetCommand.run(["clients", "show", "web", "--data-dir", data]).stdout.utf8))
            as? [String: Any]
        #expect(shown?["redirect_uris"] as? [String] == ["https://web.example.com/cb"])
        #expect(try SignetCommand.run(["clients", "show", "nobody", "--data-dir", data]).status != 0)
        #expect(try SignetCommand.run(["users", "update", "alice", "--phone", "+4533333333", "--name", "Alice", "--data-dir", data]).status == 0)
        #expect(try SignetCommand.run(["users", "update", "alice", "--phone", "33", "--data-dir", data]).status != 0)
        let user =
            try JSONSerialization.jsonObject(
                with: Data(try SignetCommand.run(["users", "show", "alice", "--output", "json", "--data-dir", data]).stdout.utf8)) as? [String: Any]
        #expect(user?["phone_number"] as? String == "+4533333333" && user?["name"] as? String == "Alice" && user?["password_hash"] == nil)
        let users =
            try JSONSerialization.jsonObject(
                with: Data(try SignetCommand.run(["users", "list", "--output", "json", "--data-dir", data]).stdout.utf8)) as? [[String: Any]]
        #expect(users?.count == 1)
        #expect(try SignetCommand.run(["keys", "list", "--output", "json", "--data-dir", data]).stdout.hasPrefix("["))
    }
}
