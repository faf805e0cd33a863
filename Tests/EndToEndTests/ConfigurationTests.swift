// One configuration: flags over SIGNET_ variables over a YAML or JSON file, checked once.
import Foundation
import SignetScript
import SignetServer
import SignetTesting
import Testing

@testable import signet

@Suite("Configuration: sources, precedence, errors and secrets")
struct ConfigurationTests {
    /// A line of `config check`'s report: the key in a column as wide as the longest key, two
    /// spaces, then the value and its source.
    static func reportLine(_ key: String, _ rest: String) -> String {
        key.padding(toLength: SettingKey.all.map(\.key.count).max() ?? 0, withPad: " ", startingAt: 0) + "  " + rest
    }

    /// Writes `text` to a new file and returns its path.
    func file(_ text: String, named name: String = "signet.yaml") throws -> String {
        let path = try SignetCommand.dataFolder() + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("flags win over the environment, which wins over the file; each value names its source")
    func precedence() async throws {
        let path = try file("port: 9001\nhost: 127.0.0.2\nissuer: http://127.0.0.1:9001\nlog:\n  level: debug\nadmin:\n  port: 9100\n")
        let settings = try await SettingsLoader(
            flags: [.port: .integer(9003)], configurationPath: path, environment: ["SIGNET_PORT": "9002", "SIGNET_HOST": "127.0.0.3"]
        ).load()
        #expect(settings.integer(.port) == 9003)
        #expect(settings.entry(.port)?.source == .flag("--port"))
        #expect(settings.string(.host) == "127.0.0.3")
        #expect(settings.entry(.host)?.source == .environment("SIGNET_HOST"))
        #expect(settings.string(.logLevel) == "debug")
        #expect(settings.entry(.logLevel)?.source == .file(path: path, key: "log.level"))
        #expect(settings.integer(.adminPort) == 9100)
        #expect(!settings.isSet(.tlsCertificate))
        let report = settings.report()
        #expect(report.contains("[flag --port]"))
        #expect(report.contains("[environment SIGNET_HOST]"))
        #expect(report.contains("[\(path): log.level]"))
        #expect(report.contains("[default]"))
    }

    @Test("JSON files work as YAML ones; lists, booleans and numbers are typed")
    func jsonAndTypes() async throws {
        let path = try file(
            #"{"trustedProxies": ["10.0.0.0/8", "192.168.1.1"], "dpopNonce": true, "passwordHashCost": 10, "tls": {"certificate": "/c.pem"}}"#,
            named: "signet.json")
        let settings = try await SettingsLoader(configurationPath: path, environment: [:]).load()
        #expect(settings.list(.trustedProxies) == ["10.0.0.0/8", "192.168.1.1"])
        #expect(settings.boolean(.dpopNonce) == true)
        #expect(settings.integer(.passwordHashCost) == 10)
        #expect(settings.string(.tlsCertificate) == "/c.pem")
        let variables = try await SettingsLoader(environment: ["SIGNET_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2", "SIGNET_REQUIRE_PAR": "1"]).load()
        #expect(variables.list(.trustedProxies) == ["10.0.0.1", "10.0.0.2"])
        #expect(variables.boolean(.requirePAR) == true)
    }

    @Test("every documented variable reaches its key through swift-configuration's environment provider")
    func everyVariable() async throws {
        for key in SettingKey.accepted {
            let value: String =
                switch key.kind {
                case .integer: "7"
                case .boolean: "true"
                default: "/some/value"
                }
            var environment = [key.environmentName: value]
            if key.key.hasSuffix("File") {
                let secret = try file("s3cret-value\n", named: "secret")
                environment[key.environmentName] = secret
            }
            let settings = try await SettingsLoader(environment: environment).load()
            if key.key.hasSuffix("File") {
                let base = try #require(SettingKey.all.first { $0.fileKey == key })
                #expect(settings.string(base) == "s3cret-value", "\(key.environmentName)")
            } else {
                #expect(settings.entry(key)?.source == .environment(key.environmentName), "\(key.environmentName) did not reach \(key.key)")
            }
        }
    }

    @Test("an unknown key, a typo or an unknown variable is an error naming it, its source and the likely key")
    func unknownKeys() async throws {
        let path = try file("port: 9000\ntls:\n  certficate: /x.pem\nadmn:\n  port: 1\n")
        let error = await #expect(throws: SettingsError.self) { try await SettingsLoader(configurationPath: path, environment: [:]).load() }
        let problems = try #require(error?.problems)
        #expect(problems.contains("\(path): unknown key 'tls.certficate'; did you mean 'tls.certificate'?"))
        #expect(problems.contains { $0.hasPrefix("\(path): unknown key 'admn.port'") })
        let variable = await #expect(throws: SettingsError.self) { try await SettingsLoader(environment: ["SIGNET_PROT": "1"]).load() }
        #expect(variable?.problems == ["SIGNET_PROT (environment): no such setting; did you mean 'SIGNET_PORT'?"])
        // The test scripts' own variables are not settings and not errors.
        _ = try await SettingsLoader(environment: ["SIGNET_TEST_DATABASE": "x", "SIGNET_PG_PORT": "1"]).load()
        let missing = await #expect(throws: SettingsError.self) {
            try await SettingsLoader(configurationPath: "/no/such/signet.yaml", environment: [:]).load()
        }
        #expect(missing?.problems == ["/no/such/signet.yaml: no such configuration file"])
    }

    @Test("a bad value names the key and where it came from")
    func badValues() async throws {
        let fromVariable = await #expect(throws: SettingsError.self) { try await SettingsLoader(environment: ["SIGNET_PORT": "eighty"]).load() }
        #expect(fromVariable?.problems == ["port (environment SIGNET_PORT): not a valid integer"])
        let path = try file("passwordHashCost: twelve\n")
        let fromFile = await #expect(throws: SettingsError.self) { try await SettingsLoader(configurationPath: path, environment: [:]).load() }
        #expect(fromFile?.problems == ["passwordHashCost (\(path): passwordHashCost): not a valid integer"])
        let settings = try await SettingsLoader(environment: ["SIGNET_PORT": "70000", "SIGNET_LOG_FORMAT": "xml"]).load()
        #expect(throws: SettingsError.self) { try ServeSettings.configuration(settings) }
        #expect(throws: SettingsError.self) { try ServeSettings.logging(settings) }
        let admin = try await SettingsLoader(environment: ["SIGNET_ADMIN_PORT": "8080", "SIGNET_ADMIN_TOKEN": "short"]).load()
        let clash = #expect(throws: SettingsError.self) { try ServeSettings.adminListener(admin, publicPort: 8080) }
        #expect(clash?.problems == ["admin.port (environment SIGNET_ADMIN_PORT): must not be the public port 8080"])
    }

    @Test("the tokens.… lifetimes reach the provider from flags, variables and files, within their bounds; a bad one names its key and source")
    func tokenLifetimes() async throws {
        let path = try file("tokens:\n  accessTokenLifetime: 300\n  refreshTokenAbsoluteLifetime: 86400\n")
        let settings = try await SettingsLoader(
            flags: [.idTokenLifetime: .integer(120)], configurationPath: path,
            environment: ["SIGNET_TOKENS_CODE_LIFETIME": "30", "SIGNET_TOKENS_REFRESH_TOKEN_IDLE_LIFETIME": "3600"]
        ).load()
        let configuration = try ServeSettings.configuration(settings)
        #expect(
            configuration.tokenLifetimes
                == TokenLifetimes(accessToken: 300, idToken: 120, refreshTokenIdle: 3_600, refreshTokenAbsolute: 86_400, code: 30))
        #expect(configuration.problems().isEmpty, "\(configuration.problems())")

        let long = try await SettingsLoader(environment: ["SIGNET_TOKENS_CODE_LIFETIME": "120"]).load()
        let refusal = #expect(throws: SettingsError.self) { try ServeSettings.configuration(long) }
        #expect(refusal?.problems == ["tokens.codeLifetime (environment SIGNET_TOKENS_CODE_LIFETIME): must be 10–60 seconds, not 120"])
        let short = try await SettingsLoader(flags: [.accessTokenLifetime: .integer(5)], environment: [:]).load()
        let flagRefusal = #expect(throws: SettingsError.self) { try ServeSettings.configuration(short) }
        #expect(flagRefusal?.problems == ["tokens.accessTokenLifetime (flag --access-token-lifetime): must be 60–86400 seconds, not 5"])
        let inverted = try await SettingsLoader(
            flags: [.refreshTokenIdleLifetime: .integer(7_200), .refreshTokenAbsoluteLifetime: .integer(3_600)], environment: [:]
        ).load()
        let invertedRefusal = #expect(throws: SettingsError.self) { try ServeSettings.configuration(inverted) }
        #expect(invertedRefusal?.problems.first?.contains("must not be longer than tokens.refreshTokenAbsoluteLifetime (3600 s)") == true)

        // serve itself stops on one, before it listens.
        let data = try SignetCommand.dataFolder()
        let serve = try SignetCommand.run(["serve", "--data-dir", data, "--port", "0", "--access-token-lifetime", "5"])
        #expect(serve.status != 0)
        #expect(serve.stderr.contains("tokens.accessTokenLifetime (flag --access-token-lifetime): must be 60–86400 seconds, not 5"), "\(serve.all)")
    }

    @Test("secrets come from files, never twice, and are redacted")
    func secrets() async throws {
        let secretPath = try file("a-webhook-secret-of-some-length\n", named: "webhook-secret")
        let path = try file("sms:\n  webhookUrl: https://sms.example.com/hook\n  webhookSecretFile: \(secretPath)\n")
        let settings = try await SettingsLoader(configurationPath: path, environment: ["SIGNET_DATABASE": "postgres://u:pw-in-url@db/signet"]).load()
        #expect(settings.string(.smsWebhookSecret) == "a-webhook-secret-of-some-length")
        #expect(settings.entry(.smsWebhookSecret)?.source == .secretFile(path: secretPath, via: "sms.webhookSecretFile"))
        let report = settings.report()
        #expect(!report.contains("a-webhook-secret-of-some-length"))
        #expect(!report.contains("pw-in-url"))
        #expect(report.contains("<redacted>"))
        let twice = await #expect(throws: SettingsError.self) {
            try await SettingsLoader(configurationPath: path, environment: ["SIGNET_SMS_WEBHOOK_SECRET": "another-secret-value"]).load()
        }
        #expect(twice?.problems.first?.hasPrefix("sms.webhookSecret is given twice") == true)
        let unreadable = await #expect(throws: SettingsError.self) {
            try await SettingsLoader(environment: ["SIGNET_ADMIN_TOKEN_FILE": "/no/such/token"]).load()
        }
        #expect(unreadable?.problems == ["admin.token (environment SIGNET_ADMIN_TOKEN_FILE): cannot read /no/such/token"])
        // A database password from its own setting joins a URL without one.
        let joined = try await SettingsLoader(environment: [
            "SIGNET_DATABASE": "postgres://signet@db:5432/signet", "SIGNET_DATABASE_PASSWORD": "pa55",
        ]).load()
        let location = StoreLocation(settings: joined)
        #expect(location.databaseLocation == "postgres://signet:pa55@db:5432/signet")
        #expect(location.databaseDescription == "PostgreSQL postgres://signet:****@db:5432/signet")
    }

    @Test(
        "the database: a password in the --database flag, or a URL of a scheme Signet does not open, is refused without echoing the URL; a scheme in capitals is PostgreSQL"
    )
    func databaseLocations() async throws {
        let flagged = await #expect(throws: SettingsError.self) {
            try await SettingsLoader(flags: [.database: .string("postgres://signet:S3cretDbPw@db/signet")], environment: [:]).load()
        }
        #expect(flagged?.problems.count == 1)
        #expect(flagged?.problems.first?.hasPrefix("database (flag --database): the URL holds a password") == true, "\(String(describing: flagged))")
        #expect(flagged?.problems.first?.contains("S3cret") == false)
        let unparseable = await #expect(throws: SettingsError.self) {
            try await SettingsLoader(flags: [.database: .string("postgres://signet:S3c#retDbPw@db/signet")], environment: [:]).load()
        }
        #expect(unparseable?.problems.first?.contains("holds a password") == true, "\(String(describing: unparseable))")
        #expect(unparseable?.problems.first?.contains("S3c") == false)
        // Without a password, or from the environment, it is fine.
        _ = try await SettingsLoader(flags: [.database: .string("postgres://signet@db/signet")], environment: [:]).load()
        let fromEnvironment = try await SettingsLoader(environment: ["SIGNET_DATABASE": "Postgres://signet:S3cretDbPw@db/signet"]).load()
        #expect(StoreLocation(settings: fromEnvironment).databaseDescription == "PostgreSQL Postgres://signet:****@db/signet")

        let other = await #expect(throws: SettingsError.self) {
            try await SettingsLoader(environment: ["SIGNET_DATABASE": "mysql://root:S3cretDbPw@db/signet"]).load()
        }
        #expect(other?.problems.first?.hasPrefix("database (environment SIGNET_DATABASE): a mysql:// URL") == true, "\(String(describing: other))")
        #expect(other?.problems.first?.contains("S3cret") == false)
        let served = try SignetCommand.run(
            ["serve", "--data-dir", try SignetCommand.dataFolder(), "--port", "0"],
            environment: ["SIGNET_DATABASE": "mysql://root:S3cretDbPw@db/signet"])
        #expect(served.status != 0)
        #expect(served.all.contains("mysql://"), "\(served.all)")
        #expect(!served.all.contains("S3cret"), "\(served.all)")
    }

    @Test("signet config check prints sources with secrets redacted and exits 1 on an error; serve stops on a typo")
    func commands() throws {
        let data = try SignetCommand.dataFolder()
        let secret = try file("admin-token-0123456789-0123456789-abcdef\n", named: "admin-token")
        let good = try file("port: 9123\ndataDir: \(data)\nadmin:\n  port: 9124\n  tokenFile: \(secret)\n")
        let checked = try SignetCommand.run(["config", "check", "--config", good], environment: ["SIGNET_LOG_LEVEL": "debug"])
        #expect(checked.status == 0, "\(checked.all)")
        #expect(checked.stdout.contains(Self.reportLine("port", "9123   [\(good): port]")))
        #expect(checked.stdout.contains(Self.reportLine("log.level", "debug   [environment SIGNET_LOG_LEVEL]")))
        #expect(checked.stdout.contains(Self.reportLine("admin.token", "<redacted>   [file \(secret) (from admin.tokenFile)]")))
        #expect(!checked.all.contains("admin-token-0123456789"))

        let typo = try file("port: 9123\ndataDir: \(data)\nadmin:\n  prot: 9124\n")
        let refused = try SignetCommand.run(["config", "check", "--config", typo])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("unknown key 'admin.prot'; did you mean 'admin.port'?"))
        let serve = try SignetCommand.run(["serve", "--config", typo])
        #expect(serve.status != 0)
        #expect(serve.stderr.contains("unknown key 'admin.prot'"))
        #expect(!serve.stdout.contains("is listening"))
        // config check makes serve's own checks: plain http off loopback is refused there too.
        let open = try SignetCommand.run(["config", "check", "--host", "0.0.0.0", "--issuer", "http://id.example.com"])
        #expect(open.status != 0)
    }

    @Test("serve --config signet.yaml runs with the file's settings and its admin listener, and says it set glibc's allocator thresholds")
    func serveWithFile() async throws {
        let data = try SignetCommand.dataFolder()
        let port = try FreePort.find(), adminPort = try FreePort.find()
        let path = try file("port: \(port)\ndataDir: \(data)\npasswordHashCost: 4\nlog:\n  format: json\nadmin:\n  port: \(adminPort)\n")
        // The log goes to a file: a pipe read only after the exit could fill and stall the server.
        let logFile = URL(fileURLWithPath: data).appendingPathComponent("stderr.log")
        // Without the allocator settings of whoever runs the tests, which would leave glibc's thresholds to them.
        let server = try ChildProcess.start(
            SignetCommand.executable.path, ["serve", "--config", path],
            baseEnvironment: ProcessInfo.processInfo.environment.filter { name, _ in
                name != "GLIBC_TUNABLES" && !(name.hasPrefix("MALLOC_") && name.hasSuffix("_"))
            },
            errors: .file(logFile.path))
        defer { if server.isRunning { server.terminate() } }
        var ready: ScriptedResponse?
        for _ in 0..<150 {
            ready = try? await ScriptedBrowser().get("http://127.0.0.1:\(port)/health/ready")
            if ready?.status == 200 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(ready?.status == 200)
        let requestID = try #require(ready?.header("X-Request-Id"))
        let metrics = try await ScriptedBrowser().get("http://127.0.0.1:\(adminPort)/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.body.contains(#"signet_http_requests_total{route="/health/ready",method="GET",status="200"}"#))
        #expect(try await ScriptedBrowser().get("http://127.0.0.1:\(port)/metrics").status == 404)
        server.terminate()
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
        let log = String(decoding: try Data(contentsOf: logFile), as: UTF8.self)
        let line = try #require(log.split(separator: "\n").first { $0.contains(requestID) })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["route"] as? String == "/health/ready")
        // glibc's allocator thresholds set at start (AllocatorTuning), where the C library is glibc.
        #if canImport(Glibc)
            let allocator = try #require(log.split(separator: "\n").first { $0.contains("glibc's allocator") }, "\(log)")
            let settings = try #require(try JSONSerialization.jsonObject(with: Data(allocator.utf8)) as? [String: Any])
            #expect(settings["message"] as? String == "glibc's allocator keeps freed memory for reuse", "\(allocator)")
            #expect(settings["event"] as? String == "allocator.tuned", "\(allocator)")
            #expect(settings["trim_threshold_bytes"] as? Int == 1_048_576 && settings["map_threshold_bytes"] as? Int == 524_288, "\(allocator)")
        #endif
    }
}

@Suite("Configuration: review findings")
struct ConfigurationReviewTests {
    @Test(
        "a YAML error says where, never the line (it may hold a secret); an unparseable database URL is never echoed; the SMS URL shows its origin only"
    )
    func nothingEchoed() async throws {
        let folder = try SignetCommand.dataFolder()
        let path = folder + "/broken.yaml"
        try "admin:\n  token: \"TOPSECRET-0123456789-0123456789\n".write(toFile: path, atomically: true, encoding: .utf8)
        let broken = await #expect(throws: SettingsError.self) { try await SettingsLoader(configurationPath: path, environment: [:]).load() }
        let problem = try #require(broken?.problems.first)
        #expect(problem.hasPrefix("\(path): not a valid configuration file (line"))
        #expect(!problem.contains("TOPSECRET"))
        let listed = try SignetCommand.run(
            ["clients", "list", "--data-dir", folder], environment: ["SIGNET_DATABASE": "postgres://signet:pa#ss/word@127.0.0.1:1/signet"])
        #expect(listed.status != 0)
        #expect(!listed.all.contains("pa#ss"))
        let settings = try await SettingsLoader(environment: ["SIGNET_SMS_WEBHOOK_URL": "https://sms.example.com/hooks/KEY-123?token=abc"]).load()
        #expect(settings.report().contains(ConfigurationTests.reportLine("sms.webhookUrl", "https://sms.example.com/…")))
        #expect(!settings.report().contains("KEY-123"))
    }

    @Test("an admin token needs 32 characters with 10 different ones")
    func weakAdminToken() async throws {
        let weak = try await SettingsLoader(environment: ["SIGNET_ADMIN_PORT": "9999", "SIGNET_ADMIN_TOKEN": String(repeating: "A", count: 40)])
            .load()
        #expect(throws: SettingsError.self) { try ServeSettings.adminListener(weak, publicPort: 8080) }
        let strong = try await SettingsLoader(environment: ["SIGNET_ADMIN_PORT": "9999", "SIGNET_ADMIN_TOKEN": "0123456789abcdef0123456789abcdef"])
            .load()
        #expect(try ServeSettings.adminListener(strong, publicPort: 8080)?.port == 9999)
    }
}
