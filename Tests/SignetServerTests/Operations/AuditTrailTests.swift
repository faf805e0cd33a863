// The one audit trail: logins, tokens, logout and administration are stored events.
import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing

@Suite("Operations: the audit trail")
struct AuditTrailTests {
    @Test("a login, a failed login, tokens issued, refreshed and revoked, a logout and client changes are stored with who and why")
    func events() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let user = fixture.user.id
            _ = try await provider.submitLogin(
                fixture.backendAuthorization, browser: ScriptedBrowser(), username: "alice", password: "wrong password")
            let (_, answer) = try await fixture.backendTokens()
            let tokens = try answer.decode(TokenResponse.self)
            let refreshed = try await ScriptedBrowser().post(
                provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", tokens.refreshToken!)] + (try fixture.assertion()))
            #expect(refreshed.status == 200)
            let revoked = try await ScriptedBrowser().post(provider.url("/revoke"), form: [("token", tokens.accessToken)] + (try fixture.assertion()))
            #expect(revoked.status == 200)
            try await provider.admin.updateClient(id: "app", .init(name: "Renamed App"))
            try await provider.admin.setLocked(username: "alice", true)

            let all = try await provider.store.auditEvents(AuditQuery(limit: 100))
            let kinds = all.map(\.kind)
            // Newest first.
            #expect(kinds.first == "user.locked")
            for kind in [
                "client.added", "user.added", "login.failed", "login.succeeded", "token.issued", "token.refreshed", "token.revoked", "client.updated",
            ] {
                #expect(kinds.contains(kind), "no \(kind) event")
            }
            let failed = try #require(all.first { $0.kind == "login.failed" })
            #expect(failed.reason == "page wrong_password")
            #expect(failed.clientID == "backend")
            #expect(failed.actor == "user")
            let succeeded = try #require(all.first { $0.kind == "login.succeeded" })
            #expect(succeeded.userID == user)
            #expect(succeeded.reason?.contains("acr=urn:signet:loa:1") == true)
            let issued = try #require(all.first { $0.kind == "token.issued" })
            #expect(issued.actor == "client" && issued.userID == user && issued.clientID == "backend")
            let changed = try #require(all.first { $0.kind == "client.updated" })
            #expect(changed.actor == "admin" && changed.clientID == "app")
            // No token or password in any event.
            let stored = String(decoding: try JSONEncoder().encode(all), as: UTF8.self)
            for secret in [tokens.accessToken, tokens.refreshToken!, tokens.idToken!, Fixture.password, "wrong password"] {
                #expect(!stored.contains(secret))
            }

            // Filters: by user, by client, since a time; newest first, limited.
            let byClient = try await provider.store.auditEvents(AuditQuery(clientID: "app"))
            #expect(Set(byClient.map(\.kind)) == ["client.added", "client.updated"])
            let byUser = try await provider.store.auditEvents(AuditQuery(userID: user, limit: 2))
            #expect(byUser.map(\.kind) == ["user.locked", "token.revoked"])
            provider.clock.advance(by: 3600)
            try await provider.admin.updateClient(id: "app", .init(name: "Again"))
            let recent = try await provider.store.auditEvents(AuditQuery(since: provider.clock.now.addingTimeInterval(-60)))
            #expect(recent.map(\.kind) == ["client.updated"])
            // Retention removes what is older than the cutoff, nothing newer.
            let removed = try await provider.store.purgeAuditEvents(before: provider.clock.now.addingTimeInterval(-60))
            #expect(removed == all.count)
            #expect(try await provider.store.auditEvents(AuditQuery()).map(\.kind) == ["client.updated"])
        }
    }

    @Test("SMS sent and a locked account are events; refusals by a limit are counted, not stored (nobody can fill the trail)")
    func lockAndSMS() async throws {
        try await withTestProvider(configure: { $0.throttle.freeFailuresPerAccount = 1 }) { provider in
            let fixture = try await Fixture.make(provider)
            _ = try await provider.signInTwoFactor(fixture.appAuthorization, username: "alice", password: Fixture.password)
            let browser = ScriptedBrowser()
            for _ in 0..<2 {
                _ = try await provider.submitLogin(fixture.backendAuthorization, browser: browser, username: "alice", password: "wrong")
            }
            provider.clock.advance(by: 3600)
            try await provider.admin.setLocked(username: "alice", true)
            _ = try await provider.submitLogin(
                fixture.backendAuthorization, browser: ScriptedBrowser(), username: "alice", password: Fixture.password)
            let sent = try await provider.store.auditEvents(AuditQuery(userID: fixture.user.id)).filter { $0.kind == "sms.sent" }
            #expect(sent.count == 1 && sent.first?.clientID == "app")
            let kinds = try await provider.store.auditEvents(AuditQuery(clientID: "backend")).map(\.kind)
            #expect(kinds.contains("login.locked"))
            let backend = try await provider.store.auditEvents(AuditQuery(clientID: "backend"))
            // Two wrong passwords: the first checked and stored, the second paused and only counted.
            #expect(backend.filter { $0.kind == "login.failed" }.count == 1)
            #expect(!backend.contains { $0.kind == "login.throttled" })
            #expect(provider.metrics.exposition().contains(#"signet_throttle_refusals_total{limit="sign_in_failures"} 1"#))
        }
    }
}
