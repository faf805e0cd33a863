// `signet backup` under load and `signet restore` into a fresh folder.
import Foundation
import SignetCore
import SignetServer
import SignetStorage
import SignetTesting
import Testing

@Suite("Backup and restore of the SQLite store")
struct BackupTests {
    @Test(
        "against a store an older build made, an administrative command refuses to run and leaves it as it is, and a backup copies it as it is; a backup of a missing store is refused"
    )
    func olderStoreIsNotMigratedByCommands() async throws {
        let data = try SignetCommand.dataFolder()
        let path = data + "/signet.sqlite"
        try await SchemaMigrationFixture.makeStore(at: path, version: 9)

        let users = try SignetCommand.run(["users", "list", "--data-dir", data])
        #expect(users.status != 0)
        #expect(users.all.contains("schema version 9"), "\(users.all)")
        let backupFile = data + "/backup.sqlite"
        let backup = try SignetCommand.run(["backup", "--to", backupFile, "--data-dir", data])
        #expect(backup.status == 0, "\(backup.all)")
        #expect(try await SchemaMigrationFixture.version(at: path) == 9)
        #expect(try await SchemaMigrationFixture.version(at: backupFile) == 9)
        // The store named as an `sqlite://` location is the same file.
        let named = try SignetCommand.run(["backup", "--to", data + "/named.sqlite", "--database", "sqlite://" + path, "--data-dir", data])
        #expect(named.status == 0, "\(named.all)")

        // A mistyped data folder: no store is made for the occasion and backed up.
        let empty = try SignetCommand.dataFolder()
        let none = try SignetCommand.run(["backup", "--to", empty + "/backup.sqlite", "--data-dir", empty])
        #expect(none.status != 0)
        #expect(none.all.contains("no store"), "\(none.all)")
        #expect(!FileManager.default.fileExists(atPath: empty + "/signet.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: empty + "/backup.sqlite"))
    }

    static let redirect = "com.example.app:/cb"

    /// One browser login of `username` and its code redeemed: the grant id of its access token.
    func grant(_ provider: TestProvider, _ username: String) async throws -> String {
        let authorization = TestAuthorization(clientID: "app", redirectURI: Self.redirect, scope: "openid")
        let code = try await provider.signIn(authorization, username: username, password: "a password of some length")
        let tokens = try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")]).decode(TokenResponse.self)
        return try #require(AccessTokenClaims.unverified(tokens.accessToken)).grantID
    }

    @Test("a backup taken while logins write holds every user, client, key and grant made before it; restore puts it in a fresh folder")
    func backupUnderLoad() async throws {
        let data = try SignetCommand.dataFolder()
        let store = try await SQLStore.sqlite(path: data + "/signet.sqlite")
        try await withTestProvider(store: store) { provider in
            _ = try await provider.admin.addClient(.init(id: "app", name: "App", authMethod: .none, redirectURIs: [Self.redirect]))
            _ = try await provider.admin.addClient(.init(id: "other", name: "Other", authMethod: .none, redirectURIs: [Self.redirect]))
            for index in 0..<8 { try await provider.admin.addUser(username: "user\(index)", password: "a password of some length") }
            var before: [String] = []
            for index in 0..<8 { before.append(try await grant(provider, "user\(index)")) }

            // Logins keep writing while the backup runs in another process.
            let backupFile = data + "/backup.sqlite"
            let (backup, during) = try await withThrowingTaskGroup(of: (SignetCommand.Output?, Int).self) { group in
                group.addTask { (try await Task.detached { try SignetCommand.run(["backup", "--to", backupFile, "--data-dir", data]) }.value, 0) }
                group.addTask {
                    var made = 0
                    for round in 0..<12 {
                        _ = try await grant(provider, "user\(round % 8)")
                        made += 1
                    }
                    return (nil, made)
                }
                var output: SignetCommand.Output?
                var made = 0
                for try await (result, count) in group {
                    if let result { output = result }
                    made += count
                }
                return (output, made)
            }
            let backupOutput = try #require(backup)
            #expect(backupOutput.status == 0, "\(backupOutput.all)")
            #expect(during == 12, "no login failed while the backup ran")
            #expect(try FileManager.default.attributesOfItem(atPath: backupFile)[.posixPermissions] as? Int == 0o600)
            #expect(try SignetCommand.run(["backup", "--to", backupFile, "--data-dir", data]).status != 0, "an existing file is never overwritten")

            let fresh = try SignetCommand.dataFolder()
            let restored = try SignetCommand.run(["restore", "--from", backupFile, "--data-dir", fresh])
            #expect(restored.status == 0, "\(restored.all)")
            let copy = try await SQLStore.sqlite(path: fresh + "/signet.sqlite")
            #expect(Set(try await copy.listUsers().map(\.username)) == Set(try await store.listUsers().map(\.username)))
            #expect(try await copy.listClients().map(\.id) == ["app", "other"])
            #expect(Set(try await copy.signingKeys().map(\.kid)) == Set(try await store.signingKeys().map(\.kid)))
            for grantID in before { #expect(try await copy.grant(id: grantID) != nil, "grant \(grantID)") }
            try await copy.close()

            let again = try SignetCommand.run(["restore", "--from", backupFile, "--data-dir", fresh])
            #expect(again.status != 0, "a restore never replaces a store that is there")
            #expect(again.all.contains("exists"), "\(again.all)")
            let notAStore = data + "/not-a-store"
            try Data("hello".utf8).write(to: URL(fileURLWithPath: notAStore))
            let refused = try SignetCommand.run(["restore", "--from", notAStore, "--data-dir", try SignetCommand.dataFolder()])
            #expect(refused.status != 0)
            #expect(refused.all.contains("not a Signet SQLite store"), "\(refused.all)")
        }
        try await store.close()
    }
}
