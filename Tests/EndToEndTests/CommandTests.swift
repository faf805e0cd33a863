import Foundation
import SignetCore
import SignetScript
import SignetTesting
import Testing

/// Runs the built `signet` command (or `signet-bench`) and captures what it prints.
struct SignetCommand {
    static var executable: URL { executable(named: "signet") }

    /// The package's executable `name`: test bundles are built next to the package's executables.
    static func executable(named name: String) -> URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent(name)
    }

    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
        var all: String { stdout + stderr }
    }

    /// Runs `signet arguments…` to completion; with a `prefix`, runs `prefix… signet arguments…`
    /// (a program that runs the command, such as `taskset`); with `program`, that executable of
    /// the package instead of `signet`.
    static func run(
        _ arguments: [String], input: String? = nil, environment: [String: String] = [:], prefix: [String] = [], program: String = "signet"
    ) throws -> Output {
        let path = executable(named: program).path
        let command = prefix + [path] + arguments
        // Standard error goes to a file, not a second pipe: a pipe nobody reads while standard
        // output is read to its end would stop a command (or its server) that writes much there.
        let result = try ChildProcess.run(command[0], Array(command.dropFirst()), environment: environment, input: input)
        return Output(status: result.status, stdout: result.standardOutput, stderr: result.standardError)
    }

    /// A fresh data folder.
    static func dataFolder() throws -> String {
        try TestFolder.make("cli").path
    }
}

@Suite("The signet command")
struct CommandTests {
    @Test("serve refuses plain http outside loopback and a lone TLS file, with a clear message")
    func serveRefusesBadConfiguration() throws {
        let data = try SignetCommand.dataFolder()
        let remote = try SignetCommand.run(["serve", "--data-dir", data, "--issuer", "http://id.example.com"])
        #expect(remote.status != 0)
        #expect(remote.all.contains("TLS is required outside loopback"))
        let lone = try SignetCommand.run(["serve", "--data-dir", data, "--tls-certificate", "/tmp/none.pem"])
        #expect(lone.status != 0)
        #expect(lone.all.contains("--tls-certificate and --tls-key go together"))
        let badPort = try SignetCommand.run(["serve", "--data-dir", data, "--port", "99999"])
        #expect(badPort.status != 0)
        #expect(badPort.all.contains("port (flag --port): must be 0–65535"))
        let noSends = try SignetCommand.run(["serve", "--data-dir", data, "--account-send-limit", "0"])
        #expect(noSends.status != 0)
        #expect(noSends.all.contains("--account-send-limit"))
    }

    @Test("clients add validates redirect URIs, prints a secret once, and list/remove work")
    func clients() throws {
        let data = try SignetCommand.dataFolder()
        let bad = try SignetCommand.run(["clients", "add", "web", "--redirect-uri", "http://evil.example.com/cb", "--data-dir", data])
        #expect(bad.status != 0)
        #expect(bad.all.contains("not a loopback"))
        let added = try SignetCommand.run([
            "clients", "add", "web", "--auth-method", "client_secret_basic", "--redirect-uri", "https://web.example.com/cb", "--data-dir", data,
        ])
        #expect(added.status == 0)
        #expect(added.stdout.contains("client_secret: "))
        let duplicate = try SignetCommand.run(["clients", "add", "web", "--redirect-uri", "https://web.example.com/cb", "--data-dir", data])
        #expect(duplicate.status != 0)
        let list = try SignetCommand.run(["clients", "list", "--data-dir", data])
        #expect(list.stdout.contains("web\tclient_secret_basic"))
        #expect(!list.stdout.contains(added.stdout.components(separatedBy: "client_secret: ")[1].prefix(20)))
        #expect(try SignetCommand.run(["clients", "remove", "web", "--data-dir", data]).status == 0)
        #expect(try SignetCommand.run(["clients", "remove", "web", "--data-dir", data]).status != 0)
    }

    @Test("clients add|update set min_acr and the native login; a bad level or an unknown client is refused")
    func clientAssurance() throws {
        let data = try SignetCommand.dataFolder()
        let added = try SignetCommand.run([
            "clients", "add", "app", "--redirect-uri", "com.example.app:/cb", "--min-acr", "urn:signet:loa:2", "--data-dir", data,
        ])
        #expect(added.status == 0, "\(added.all)")
        let badLevel = try SignetCommand.run([
            "clients", "add", "app2", "--redirect-uri", "com.example.app:/cb", "--min-acr", "gold", "--data-dir", data,
        ])
        #expect(badLevel.status != 0)
        #expect(badLevel.all.contains("min_acr must be one of"))
        let updated = try SignetCommand.run(["clients", "update", "app", "--native-login", "--data-dir", data])
        #expect(updated.stdout.contains("min_acr urn:signet:loa:2, native login on"))
        let cleared = try SignetCommand.run(["clients", "update", "app", "--min-acr", "none", "--no-native-login", "--data-dir", data])
        #expect(cleared.stdout.contains("min_acr none, native login off"))
        let unknown = try SignetCommand.run(["clients", "update", "nobody", "--native-login", "--data-dir", data])
        #expect(unknown.status != 0)
        #expect(unknown.all.contains("no client nobody"))
    }

    @Test(
        "clients add|update set a client's own token lifetimes within their bounds; default gives the provider's back; a bad value is refused and changes nothing"
    )
    func clientLifetimes() throws {
        let data = try SignetCommand.dataFolder()
        let added = try SignetCommand.run(
            [
                "clients", "add", "app", "--redirect-uri", "com.example.app:/cb", "--access-token-lifetime", "900", "--code-lifetime", "30",
                "--data-dir", data,
            ])
        #expect(added.status == 0, "\(added.all)")
        let shown = try SignetCommand.run(["clients", "show", "app", "--data-dir", data])
        #expect(shown.stdout.contains("\"signet_access_token_lifetime\" : 900"), "\(shown.stdout)")
        #expect(shown.stdout.contains("\"signet_code_lifetime\" : 30"), "\(shown.stdout)")
        let tooShort = try SignetCommand.run(["clients", "update", "app", "--access-token-lifetime", "5", "--data-dir", data])
        #expect(tooShort.status != 0)
        #expect(tooShort.all.contains("access_token_lifetime must be 60 s–86400 s, not 5 s"), "\(tooShort.all)")
        let notANumber = try SignetCommand.run(["clients", "update", "app", "--code-lifetime", "soon", "--data-dir", data])
        #expect(notANumber.status != 0)
        #expect(notANumber.all.contains("--code-lifetime takes a number of seconds or default, not 'soon'"), "\(notANumber.all)")
        let idleOverAbsolute = try SignetCommand.run(
            ["clients", "update", "app", "--refresh-token-idle-lifetime", "7200", "--refresh-token-absolute-lifetime", "3600", "--data-dir", data])
        #expect(idleOverAbsolute.status != 0)
        #expect(idleOverAbsolute.all.contains("refresh_token_idle_lifetime must not be longer than refresh_token_absolute_lifetime"))
        let unchanged = try SignetCommand.run(["clients", "show", "app", "--data-dir", data])
        #expect(unchanged.stdout == shown.stdout)
        let reset = try SignetCommand.run(["clients", "update", "app", "--access-token-lifetime", "default", "--data-dir", data])
        #expect(reset.status == 0, "\(reset.all)")
        let after = try SignetCommand.run(["clients", "show", "app", "--data-dir", data])
        #expect(!after.stdout.contains("signet_access_token_lifetime"), "\(after.stdout)")
        #expect(after.stdout.contains("\"signet_code_lifetime\" : 30"))
    }

    @Test("users lock and unlock; an unknown user is named")
    func lockUsers() throws {
        let data = try SignetCommand.dataFolder()
        #expect(
            try SignetCommand.run(
                ["users", "add", "erin", "--password-stdin", "--password-hash-cost", "4", "--data-dir", data], input: "a fine passphrase\n"
            ).status == 0)
        #expect(try SignetCommand.run(["users", "lock", "erin", "--data-dir", data]).stdout.contains("Locked user erin"))
        #expect(try SignetCommand.run(["users", "unlock", "erin", "--data-dir", data]).stdout.contains("Unlocked user erin"))
        let unknown = try SignetCommand.run(["users", "lock", "nobody", "--data-dir", data])
        #expect(unknown.status != 0)
        #expect(unknown.all.contains("no user nobody"))
    }

    @Test("users add reads the password from stdin and refuses over-long passwords")
    func users() throws {
        let data = try SignetCommand.dataFolder()
        let added = try SignetCommand.run(
            ["users", "add", "Dana", "--password-stdin", "--password-hash-cost", "4", "--data-dir", data], input: "a fine passphrase\n")
        #expect(added.status == 0)
        #expect(try SignetCommand.run(["users", "list", "--data-dir", data]).stdout.contains("dana"))
        let long = try SignetCommand.run(
            ["users", "set-password", "dana", "--password-stdin", "--password-hash-cost", "4", "--data-dir", data],
            input: String(repeating: "x", count: 80) + "\n")
        #expect(long.status != 0)
        #expect(long.all.contains("1–72 bytes"))
    }

    @Test("keys rotate keeps a next key published and one active key")
    func keys() throws {
        let data = try SignetCommand.dataFolder()
        #expect(try SignetCommand.run(["keys", "rotate", "--data-dir", data]).status == 0)
        #expect(try SignetCommand.run(["keys", "rotate", "--data-dir", data]).status == 0)
        let list = try SignetCommand.run(["keys", "list", "--data-dir", data]).stdout
        #expect(list.components(separatedBy: "\tactive\t").count == 2)
        #expect(list.components(separatedBy: "\tnext\t").count == 2)
        #expect(list.components(separatedBy: "\tretired\t").count == 2)
    }

    @Test("signet --version prints the version and nothing else")
    func version() throws {
        let version = try SignetCommand.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == SignetVersion.current)
    }

    @Test("serve seeds the demo and `signet demo` (browser, --native, --fapi) completes every step against it")
    func serveAndDemo() async throws {
        let data = try SignetCommand.dataFolder()
        let port = try FreePort.find()
        let bannerFile = data + "/serve-output.txt"
        let server = try ChildProcess.start(
            SignetCommand.executable.path, ["serve", "--data-dir", data, "--port", String(port), "--password-hash-cost", "4"],
            output: .file(bannerFile))
        defer { server.terminate() }
        var ready = false
        for _ in 0..<150 where !ready {
            if let response = try? await ScriptedBrowser().get("http://127.0.0.1:\(port)/.well-known/openid-configuration"), response.status == 200 {
                ready = true
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(ready)
        let demo = try SignetCommand.run(["demo", "--data-dir", data])
        #expect(demo.status == 0, "\(demo.all)")
        #expect(demo.stdout.contains("All steps passed."))
        #expect(demo.stdout.contains("private_key_jwt"))
        let native = try SignetCommand.run(["demo", "--native", "--data-dir", data])
        #expect(native.status == 0, "\(native.all)")
        #expect(native.stdout.contains("amr [\"pwd\", \"sms\", \"mfa\"]"))
        #expect(native.stdout.contains("All steps passed."))
        let fapi = try SignetCommand.run(["demo", "--fapi", "--data-dir", data])
        #expect(fapi.status == 0, "\(fapi.all)")
        #expect(fapi.stdout.contains("token_type DPoP, cnf.jkt"))
        #expect(fapi.stdout.contains("accepted the token with a proof"))
        #expect(fapi.stdout.contains("\"accounts\":[\"everyday\",\"savings\"]"))
        #expect(fapi.stdout.contains("is refused"))
        #expect(fapi.stdout.contains("All steps passed."))
        let outbox = try SignetCommand.run(["outbox", "--data-dir", data, "--last", "1"])
        #expect(outbox.stdout.contains("login_otp"))
        #expect(outbox.stdout.contains("@127.0.0.1 #"))
        let noDevices = try SignetCommand.run(["devices", "list", "demo", "--data-dir", data])
        #expect(noDevices.stdout.contains("No devices."))
        #expect(try SignetCommand.run(["devices", "list", "nobody", "--data-dir", data]).status != 0)
        // serve made the device CA when it started, before any device: the URL it prints answers.
        let published = try await ScriptedBrowser().get("http://127.0.0.1:\(port)/devices/ca.pem")
        #expect(published.status == 200)
        #expect(published.body.hasPrefix("-----BEGIN CERTIFICATE-----"))
        let made = try SignetCommand.run(["ca", "list", "--data-dir", data]).stdout
        #expect(made.components(separatedBy: "\tissuing\t").count == 2, "\(made)")
        #expect(!made.contains("\ttrusted\t"))
        let rotated = try SignetCommand.run(["ca", "rotate", "--data-dir", data])
        #expect(rotated.stdout.contains("Now issuing device certificates with CA"), "\(rotated.all)")
        _ = try SignetCommand.run(["ca", "rotate", "--data-dir", data])
        let authorities = try SignetCommand.run(["ca", "list", "--data-dir", data]).stdout
        #expect(authorities.components(separatedBy: "\tissuing\t").count == 2)
        #expect(authorities.components(separatedBy: "\ttrusted\t").count == 3, "the one serve made and the first rotation's")
        let forgotten = try SignetCommand.run(["users", "forget-devices", "demo", "--data-dir", data])
        #expect(forgotten.stdout.contains("Revoked 1 remember token of demo"))
        server.terminate()
        server.waitUntilExit()
        let banner = try String(contentsOfFile: bannerFile, encoding: .utf8)
        #expect(banner.contains("demo-backend"))
        #expect(banner.contains("FAPI 2.0 client demo-bank"))
        #expect(banner.contains("http://127.0.0.1:\(port)/.well-known/openid-configuration"))
    }
}

@Suite("signet clients keygen")
struct KeygenCommandTests {
    @Test("keygen writes a private JWK only its owner can read, prints the public JWKS, and refuses to overwrite")
    func keygen() throws {
        let data = try SignetCommand.dataFolder()
        let path = data + "/client.jwk.json"
        let made = try SignetCommand.run(["clients", "keygen", "--private-key-file", path])
        #expect(made.status == 0, "\(made.all)")
        let jwks = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])
        let key = try #require((jwks["keys"] as? [[String: Any]])?.first)
        #expect(key["kty"] as? String == "EC")
        #expect(key["d"] == nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let privateJWK = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: String])
        #expect(privateJWK["d"] != nil)
        #expect(privateJWK["kid"] == key["kid"] as? String)
        // The registered JWKS works for a client; a second keygen to the same file is refused.
        #expect(
            try SignetCommand.run([
                "clients", "add", "svc", "--auth-method", "private_key_jwt", "--redirect-uri", "https://svc.example.com/cb", "--jwks-file",
                writeJWKS(made.stdout, in: data), "--data-dir", data,
            ]).status == 0)
        let again = try SignetCommand.run(["clients", "keygen", "--private-key-file", path])
        #expect(again.status != 0)
        #expect(again.all.contains("exists"))
    }

    func writeJWKS(_ text: String, in folder: String) throws -> String {
        let path = folder + "/public.jwks.json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
