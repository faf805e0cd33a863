// Devices across instances, through the helpdesk commands, and as openssl reads their certificates.
import Crypto
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStorage
import SignetStore
import SignetTesting
import Testing
import X509

@Suite("Devices: shared by instances, administered by command, checked by openssl")
struct DeviceLifecycleTests {
    static let redirect = "com.example.wallet:/cb"
    static let password = "a long passphrase"

    static func seed(_ provider: TestProvider) async throws {
        var wallet = SignetAdmin.NewClient(id: "wallet", name: "Wallet", authMethod: .none, redirectURIs: [redirect])
        wallet.apiScopes = ["device"]
        _ = try await provider.admin.addClient(wallet)
        _ = try await provider.admin.addUser(username: "alice", password: password, phoneNumber: "+4511111111")
    }

    @Test(
        "a lock through one instance is seen at once by another sharing the database: status, /userinfo and refresh all refuse",
        arguments: EndToEndStore.available)
    func lockSeenByAnotherInstance(_ kind: EndToEndStore) async throws {
        let database = try kind.newDatabase()
        let first = try await kind.open(database: database)
        let second = try await kind.open(database: database)
        defer {
            Task {
                try? await first.close(); try? await second.close()
            }
        }
        try await withTestProvider(store: first, tls: true) { one in
            try await withTestProvider(store: second, tls: true) { two in
                try await Self.seed(one)
                let device = try await one.activateDevice(clientID: "wallet", redirectURI: Self.redirect, username: "alice", password: Self.password)
                var authorization = TestAuthorization(clientID: "wallet", redirectURI: Self.redirect, scope: "openid")
                let code = try await one.signIn(authorization, username: "alice", password: Self.password)
                let tokens = try await one.redeem(code, authorization, clientAuth: [("client_id", "wallet")], browser: device.browser).decode(
                    TokenResponse.self)
                #expect(try await device.browser.get(two.url("/devices/status")).status == 200, "the second instance knows the device")
                #expect(
                    try await device.browser.get(one.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")]).status == 200)

                // The user locks it through the second instance, from a fresh login there.
                authorization = TestAuthorization(clientID: "wallet", redirectURI: Self.redirect, scope: "openid")
                let freshCode = try await two.signIn(authorization, username: "alice", password: Self.password)
                let fresh = try await two.redeem(freshCode, authorization, clientAuth: [("client_id", "wallet")]).decode(TokenResponse.self)
                let locked = try await ScriptedBrowser().post(
                    two.url("/devices/\(device.instanceID)/lock"), form: [], headers: [("Authorization", "Bearer \(fresh.accessToken)")])
                #expect(locked.status == 200, "\(locked.body)")

                // The first instance sees it at once.
                let status = try await device.browser.get(one.url("/devices/status"))
                #expect(status.status == 401)
                #expect(status.json["error"] as? String == "device_revoked")
                #expect(
                    try await device.browser.get(one.url("/userinfo"), headers: [("Authorization", "Bearer \(tokens.accessToken)")]).status == 401)
                let refreshed = try await device.browser.post(
                    one.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", tokens.refreshToken ?? ""), ("client_id", "wallet")])
                #expect(refreshed.status == 400)
            }
        }
    }

    @Test("50 parallel locks of one device record exactly one lock event and one notice")
    func parallelLocks() async throws {
        let store = try await EndToEndStore.sqlite.open()
        defer { Task { try? await store.close() } }
        try await withTestProvider(store: store, tls: true) { provider in
            try await Self.seed(provider)
            let device = try await provider.activateDevice(clientID: "wallet", redirectURI: Self.redirect, username: "alice", password: Self.password)
            let lifecycle = DeviceLifecycle(
                store: provider.store, clock: provider.clock.signetClock, random: SecureRandom(), logger: .init(label: "test"),
                messages: provider.outbox)
            let revoked = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await lifecycle.revoke(instanceID: device.instanceID, because: .locked, by: .admin, note: "stolen") != nil }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(revoked == 1)
            let alice = try #require(try await provider.store.user(username: "alice"))
            #expect(try await provider.store.auditEvents(userID: alice.id, limit: 100).filter { $0.kind == "device.locked" }.count == 1)
            #expect(await provider.outbox.messages.filter { $0.purpose == "device.locked" }.count == 1)
        }
    }

    @Test("openssl verify accepts a device certificate against /devices/ca.pem; x509 -text shows the device URI, clientAuth and digitalSignature")
    func openssl() async throws {
        try await withTestProvider(tls: true) { provider in
            try await Self.seed(provider)
            let device = try await provider.activateDevice(clientID: "wallet", redirectURI: Self.redirect, username: "alice", password: Self.password)
            let folder = try SignetCommand.dataFolder()
            let caFile = folder + "/ca.pem", leafFile = folder + "/device.pem"
            let published = try await ScriptedBrowser().get(provider.url("/devices/ca.pem"))
            try published.body.write(toFile: caFile, atomically: true, encoding: .utf8)
            try device.chain[0].write(toFile: leafFile, atomically: true, encoding: .utf8)
            let verify = try Self.openssl(["verify", "-purpose", "sslclient", "-CAfile", caFile, leafFile])
            #expect(verify.status == 0, "\(verify.output)")
            #expect(verify.output.contains("OK"))
            let text = try Self.openssl(["x509", "-in", leafFile, "-noout", "-text"]).output
            #expect(text.contains("URI:urn:signet:device:\(device.instanceID)"))
            #expect(text.contains("TLS Web Client Authentication"))
            #expect(text.contains("Digital Signature"))
            #expect(text.contains("CA:FALSE"))
            #expect(text.contains("ecdsa-with-SHA256"))
            // A certificate from another CA with the same names does not verify.
            let foreign = try DeviceCertificateAuthority.make(name: "Signet", validity: 86_400, now: Date())
            try foreign.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            #expect(try Self.openssl(["verify", "-CAfile", caFile, leafFile]).status != 0)
        }
    }

    @Test("signet devices list, lock USER, remove and events: the helpdesk's view; the user is told; a second lock finds nothing")
    func helpdeskCommands() async throws {
        let data = try SignetCommand.dataFolder()
        let added = try SignetCommand.run(
            ["users", "add", "alice", "--password-stdin", "--password-hash-cost", "4", "--phone", "+4511111111", "--data-dir", data],
            input: "a fine passphrase\n")
        #expect(added.status == 0, "\(added.all)")
        let store = try await SQLStore.sqlite(path: data + "/signet.sqlite")
        let alice = try #require(try await store.user(username: "alice"))
        let now = Date()
        for index in 0..<2 {
            try await store.insertDevice(
                DeviceRecord(
                    instanceID: String(repeating: String(index), count: 43), clientID: "wallet", userID: alice.id, grantID: "g\(index)",
                    certificateSerial: "0\(index)", certificateThumbprint: "t\(index)", certificateNotAfter: now.addingTimeInterval(86_400),
                    name: "Phone \(index)",
                    createdAt: now))
        }
        try await store.close()

        let list = try SignetCommand.run(["devices", "list", "alice", "--data-dir", data])
        #expect(list.stdout.contains("Phone 0") && list.stdout.contains("activated"))
        let removed = try SignetCommand.run([
            "devices", "remove", String(repeating: "0", count: 43), "--reason", "asked by phone", "--data-dir", data,
        ])
        #expect(removed.status == 0, "\(removed.all)")
        let locked = try SignetCommand.run(["devices", "lock", "alice", "--reason", "phone stolen", "--data-dir", data])
        #expect(locked.status == 0, "\(locked.all)")
        #expect(locked.stdout.contains("Locked 1 device"))
        #expect(try SignetCommand.run(["devices", "lock", "alice", "--reason", "again", "--data-dir", data]).stdout.contains("Nothing to lock"))
        #expect(try SignetCommand.run(["devices", "remove", String(repeating: "0", count: 43), "--reason", "again", "--data-dir", data]).status != 0)
        let events = try SignetCommand.run(["devices", "events", "alice", "--data-dir", data]).stdout
        let lines = events.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("device.locked\tadmin") == true)
        #expect(lines.first?.contains("phone stolen") == true)
        #expect(lines.last?.contains("device.removed\tadmin") == true)
        let after = try SignetCommand.run(["devices", "list", "alice", "--data-dir", data]).stdout
        #expect(after.contains("removed") && after.contains("locked"))
        let outbox = try String(contentsOfFile: data + "/outbox.jsonl", encoding: .utf8)
        #expect(outbox.contains("device.locked") && outbox.contains("device.removed"))
        #expect(try SignetCommand.run(["devices", "lock", "nobody", "--reason", "x", "--data-dir", data]).status != 0)
    }

    static func openssl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try ChildProcess.run("/usr/bin/env", ["openssl"] + arguments, errors: .standardOutput)
        return (result.status, result.standardOutput)
    }
}
