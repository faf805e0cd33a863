// Which answers of a sign-in wait for the disk (SQLite, `sqlite.synchronous: full`).
import Foundation
import SignetScript
import SignetStore
import Synchronization
import SignetCore
import SignetServer
import SignetTesting
import Testing

@testable import SignetStorage

/// A login page and a right password's redirect make only writes that do not bind (a login
/// begun, its step, a code and grant, a browser session, the throttle's slots): they are answered
/// before those are on disk. A wrong password counts a failure, and the token endpoint spends a
/// code: both are answered only once everything committed before them is on disk, the sign-in's
/// earlier writes included (docs/operations.md, WriteBinding).
@Suite("End to end: which sign-in answers wait for the disk")
struct AnswerDurabilityTests {
    @Test("the login page and a right password's redirect do not wait; a wrong password and the code's redemption wait for everything before them")
    func signInAnswers() async throws {
        try await withSQLiteProvider { provider, database, _ in
            _ = try await provider.admin.addUser(username: "carol", password: "a long passphrase", name: "Carol")
            #expect(database.commits.durable >= database.commits.made)

            // A wrong password: the failure is on disk before the answer tells of it.
            let wrong = TestAuthorization(clientID: "app", redirectURI: "com.example.app:/cb")
            let refused = try await provider.submitLogin(wrong, browser: ScriptedBrowser(), username: "carol", password: "not the passphrase")
            #expect(refused.status != 303)
            #expect(database.commits.durable >= database.commits.made)

            // The login page: its login session is not yet on disk when the page is given.
            let authorization = TestAuthorization(clientID: "app", redirectURI: "com.example.app:/cb")
            let browser = ScriptedBrowser()
            let page = try await browser.get(authorization.url(issuer: provider.issuer))
            #expect(page.status == 200)
            #expect(database.commits.durable < database.commits.made)

            // The right password: the redirect with the code is given before the code is on disk.
            let fields = try #require(LoginForm.fields(in: page.body))
            let redirect = try await browser.post(
                provider.url("/login"),
                form: [
                    ("authorization", fields.authorization), ("csrf_token", fields.csrfToken), ("username", "carol"),
                    ("password", "a long passphrase"),
                ])
            #expect(redirect.status == 303)
            let code = try #require(redirect.locationParameters?["code"])
            #expect(database.commits.durable < database.commits.made)

            // Redeeming it spends it: the tokens come once the code, its grant, the login and the
            // spending are all on disk.
            let tokens = try await provider.redeem(code, authorization, clientAuth: [("client_id", "app")])
            #expect(tokens.status == 200)
            #expect(database.commits.durable >= database.commits.made)
        }
    }

    @Test("an SMS code goes out only once its send is charged on disk, though the page that shows the SMS step is an answer of its own")
    func smsSendIsChargedBeforeItGoesOut() async throws {
        // When the message goes out: every commit is on disk, the charge among them (another
        // connection sees it), and only the login's SMS step, saved after the send was charged,
        // waits in the open batch. Without the charge's own flush, the charge would wait there too,
        // unseen by any other connection.
        struct AtSend: Equatable {
            let notDurable: Int
            let chargesSeenElsewhere: Int
            let batchOpen: Bool
        }
        final class Seen: Sendable { let atSend = Mutex<[AtSend]>([]) }
        let seen = Seen()
        let outbox = MemoryOutbox()
        try await withSQLiteProvider(outbox: outbox) { provider, database, path in
            await outbox.whenSending { _ in
                let commits = database.commits
                let charges = (try? chargesInFile(path)) ?? -1
                seen.atSend.withLock {
                    $0.append(AtSend(notDurable: commits.made - commits.durable, chargesSeenElsewhere: charges, batchOpen: database.hasOpenBatch))
                }
            }
            _ = try await provider.admin.addUser(username: "dana", password: "a long passphrase", name: "Dana", phoneNumber: "+4522222222")
            let authorization = TestAuthorization(clientID: "app", redirectURI: "com.example.app:/cb")
            let code = try await provider.signInTwoFactor(authorization, username: "dana", password: "a long passphrase")
            #expect(!code.isEmpty)
        }
        #expect(seen.atSend.withLock { $0 } == [AtSend(notDurable: 0, chargesSeenElsewhere: 1, batchOpen: true)])
    }

    @Test("a right password for a locked account is refused only once its audit event, the only record of it, is on disk")
    func lockedAccountEventBinds() async throws {
        try await withSQLiteProvider { provider, database, _ in
            _ = try await provider.admin.addUser(username: "erin", password: "a long passphrase", name: "Erin")
            try await provider.admin.setLocked(username: "erin", true)
            let authorization = TestAuthorization(clientID: "app", redirectURI: "com.example.app:/cb")
            let refused = try await provider.submitLogin(authorization, browser: ScriptedBrowser(), username: "erin", password: "a long passphrase")
            #expect(refused.status != 303)
            #expect(database.commits.durable >= database.commits.made)
            let events = try await provider.store.auditEvents(AuditQuery(userID: nil, clientID: "app", since: nil, limit: 10)).map(\.kind)
            #expect(events.contains("login.locked"))
        }
    }

    /// The SMS sends charged in the file, as another connection reads them.
    private func chargesInFile(_ path: String) throws -> Int {
        let connection = try SQLiteConnectionHandle(path: path, settings: ["PRAGMA busy_timeout=5000"])
        defer { connection.close() }
        let rows = try connection.run("SELECT count(*) FROM signet_limits WHERE key LIKE '%code_sends%'", binds: []).rows
        guard case .integer(let count)? = rows.first?.first else { return -1 }
        return Int(count)
    }

    /// A test provider on a fresh SQLite file (`sqlite.synchronous: full`, no timed commit) with a
    /// public client `app`; `body` gets the database to read its commit counts, and the file's path.
    private func withSQLiteProvider(outbox: MemoryOutbox = MemoryOutbox(), _ body: (TestProvider, InlineSQLiteDatabase, String) async throws -> Void)
        async throws
    {
        let folder = try TestFolder.make("durability")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("signet.sqlite").path
        let store = try await SQLStore.sqlite(path: path, synchronous: .full, laterFlush: .seconds(3600))
        defer { Task { try? await store.close() } }
        let database = try #require(store.sqlite)
        try await withTestProvider(store: store, outbox: outbox) { provider in
            _ = try await provider.admin.addClient(.init(id: "app", name: "App", authMethod: .none, redirectURIs: ["com.example.app:/cb"]))
            try await body(provider, database, path)
        }
    }
}
