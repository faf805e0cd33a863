import Foundation
import SignetCore
import SignetScript
import SignetServer
import SignetStore
import SignetTesting
import Testing

/// The provider's token lifetimes (`tokens.…`) and a client's own, as `/token` gives them.
@Suite("Token lifetimes: the provider's settings and a client's own")
struct TokenLifetimeTests {
    /// The token response's lifetimes: `expires_in`, and `exp - iat` of each token.
    struct Issued {
        let expiresIn: Int
        let accessToken: Int
        let idToken: Int
        let refreshToken: String?

        init(_ response: ScriptedResponse) throws {
            let tokens = try response.decode(TokenResponse.self)
            let access = try #require(AccessTokenClaims.unverified(tokens.accessToken))
            let idJWT = try #require(tokens.idToken)
            let id = try #require(IDTokenClaims.unverified(idJWT))
            (expiresIn, accessToken, idToken, refreshToken) = (tokens.expiresIn ?? -1, access.exp - access.iat, id.exp - id.iat, tokens.refreshToken)
        }
    }

    func refresh(_ fixture: Fixture, _ token: String) async throws -> ScriptedResponse {
        try await ScriptedBrowser().post(
            fixture.provider.url("/token"), form: [("grant_type", "refresh_token"), ("refresh_token", token)] + (try fixture.assertion()))
    }

    @Test(
        "the provider's lifetimes set expires_in, each token's exp, when a refresh token stops working unused, when a grant ends, and when a code expires"
    )
    func providerLifetimes() async throws {
        let clock = TestClock()
        try await withTestProvider(
            clock: clock,
            configure: {
                $0.accessTokenLifetime = 300
                $0.idTokenLifetime = 120
                $0.refreshTokenLifetime = 3_600
                $0.grantLifetime = 5_000
                $0.authorizationCodeLifetime = 20
            }
        ) { provider in
            let fixture = try await Fixture.make(provider)
            let issued = try Issued(try await fixture.backendTokens().1)
            #expect(issued.expiresIn == 300)
            #expect(issued.accessToken == 300)
            #expect(issued.idToken == 120)

            // A refresh token unused for longer than the idle lifetime is spent.
            let idle = try #require(issued.refreshToken)
            clock.advance(by: 3_601)
            #expect(try await refresh(fixture, idle).oauthError == "invalid_grant")

            // Refreshed within the idle lifetime it goes on, but never past the grant's absolute lifetime.
            let second = try Issued(try await fixture.backendTokens().1)
            var token = try #require(second.refreshToken)
            for _ in 0..<4 {
                clock.advance(by: 1_000)
                let answer = try await refresh(fixture, token)
                #expect(answer.status == 200, "\(answer.body)")
                token = try #require(try answer.decode(TokenResponse.self).refreshToken)
            }
            clock.advance(by: 1_001)
            #expect(try await refresh(fixture, token).oauthError == "invalid_grant", "5 001 s after the login: past the 5 000 s grant")

            // A code waits 20 s at most.
            let (authorization, code) = try await fixture.backendCode()
            clock.advance(by: 21)
            let late = try await provider.redeem(code, authorization, clientAuth: try fixture.assertion())
            #expect(late.oauthError == "invalid_grant")
        }
    }

    @Test("a client's own lifetimes replace the provider's for it alone, and default gives the provider's back")
    func clientLifetimes() async throws {
        let clock = TestClock()
        try await withTestProvider(clock: clock) { provider in
            let fixture = try await Fixture.make(provider)
            var change = SignetAdmin.ClientChange()
            change.accessTokenLifetime = .some(900)
            change.idTokenLifetime = .some(60)
            change.codeLifetime = .some(10)
            change.refreshTokenIdleLifetime = .some(120)
            try await provider.admin.updateClient(id: "backend", change)

            let issued = try Issued(try await fixture.backendTokens().1)
            #expect(issued.expiresIn == 900)
            #expect(issued.accessToken == 900)
            #expect(issued.idToken == 60)
            clock.advance(by: 121)
            let refreshToken = try #require(issued.refreshToken)
            #expect(try await refresh(fixture, refreshToken).oauthError == "invalid_grant")

            let (authorization, code) = try await fixture.backendCode()
            clock.advance(by: 11)
            #expect(try await provider.redeem(code, authorization, clientAuth: try fixture.assertion()).oauthError == "invalid_grant")

            // Another client keeps the provider's (600 s).
            let appAuthorization = fixture.appAuthorization
            let appCode = try await provider.signIn(appAuthorization, username: "alice", password: Fixture.password)
            let app = try Issued(try await provider.redeem(appCode, appAuthorization, clientAuth: [("client_id", "app")]))
            #expect(app.expiresIn == 600 && app.accessToken == 600 && app.idToken == 600)

            // Back to the provider's.
            var reset = SignetAdmin.ClientChange()
            reset.accessTokenLifetime = .some(nil)
            reset.idTokenLifetime = .some(nil)
            let client = try await provider.admin.updateClient(id: "backend", reset)
            #expect(client.accessTokenLifetime == nil && client.idTokenLifetime == nil && client.codeLifetime == 10)
            let again = try Issued(try await fixture.backendTokens().1)
            #expect(again.expiresIn == 600 && again.idToken == 600)
        }
    }

    @Test("a client's lifetime outside its bounds, or an idle lifetime longer than its absolute one, is refused and nothing changes")
    func clientBounds() async throws {
        try await withTestProvider { provider in
            _ = try await Fixture.make(provider)
            let before = try await provider.store.client(id: "backend")
            let refusals: [(SignetAdmin.ClientChange, String)] = [
                (ClientChangeFor.access(59), "access_token_lifetime"), (ClientChangeFor.access(86_401), "access_token_lifetime"),
                (ClientChangeFor.id(0), "id_token_lifetime"), (ClientChangeFor.code(61), "code_lifetime"), (ClientChangeFor.code(9), "code_lifetime"),
                (ClientChangeFor.idle(400 * 86_400), "refresh_token_idle_lifetime"),
                (ClientChangeFor.absolute(3_651 * 86_400), "refresh_token_absolute_lifetime"),
                (ClientChangeFor.idleOverAbsolute, "refresh_token_idle_lifetime must not be longer"),
                (ClientChangeFor.access(.nan), "access_token_lifetime"), (ClientChangeFor.access(.infinity), "access_token_lifetime"),
            ]
            for (change, named) in refusals {
                await #expect(throws: SignetError.self) { try await provider.admin.updateClient(id: "backend", change) }
                do { try await provider.admin.updateClient(id: "backend", change) } catch let error as SignetError {
                    #expect(error.code == .invalidConfiguration)
                    #expect(error.reason.contains(named), "\(error.reason)")
                }
            }
            #expect(try await provider.store.client(id: "backend") == before)
            // A new client is held to the same bounds.
            var new = SignetAdmin.NewClient(id: "short", name: "Short", authMethod: .none, redirectURIs: ["com.example.short:/cb"])
            new.accessTokenLifetime = 30
            await #expect(throws: SignetError.self) { try await provider.admin.addClient(new) }
            #expect(try await provider.store.client(id: "short") == nil)
        }
    }

    @Test("the provider's lifetimes outside their bounds are problems that name their setting")
    func providerBounds() {
        var configuration = SignetConfiguration()
        #expect(configuration.problems().filter { $0.hasPrefix("tokens.") }.isEmpty)
        configuration.accessTokenLifetime = 30
        configuration.authorizationCodeLifetime = 120
        configuration.refreshTokenLifetime = 200 * 86_400
        let problems = configuration.problems().filter { $0.hasPrefix("tokens.") }
        #expect(problems.contains { $0.hasPrefix("tokens.accessTokenLifetime must be 60 s–86400 s") })
        #expect(problems.contains { $0.hasPrefix("tokens.codeLifetime must be 10 s–60 s") })
        #expect(problems.contains { $0.contains("tokens.refreshTokenIdleLifetime must not be longer than tokens.refreshTokenAbsoluteLifetime") })
    }

    @Test("a retired key stays published for the longest token lifetime of any client")
    func publicationCountsClients() {
        let configuration = SignetConfiguration()
        var long = ClientRecord(id: "long", name: "Long", authMethod: .none, redirectURIs: ["com.example:/cb"], createdAt: Date())
        long.accessTokenLifetime = 7_200
        let base = configuration.retiredKeyPublicationTime
        #expect(configuration.retiredKeyPublicationTime(clients: []) == base)
        #expect(configuration.retiredKeyPublicationTime(clients: [long]) == 7_200 + configuration.keyRefreshInterval + configuration.clockSkew)
    }
}

/// One-lifetime changes for the bounds test.
enum ClientChangeFor {
    static func setting(_ lifetime: WritableKeyPath<SignetAdmin.ClientChange, TimeInterval??>, _ seconds: TimeInterval) -> SignetAdmin.ClientChange {
        var change = SignetAdmin.ClientChange()
        change[keyPath: lifetime] = .some(seconds)
        return change
    }
    static func access(_ seconds: TimeInterval) -> SignetAdmin.ClientChange { setting(\.accessTokenLifetime, seconds) }
    static func id(_ seconds: TimeInterval) -> SignetAdmin.ClientChange { setting(\.idTokenLifetime, seconds) }
    static func code(_ seconds: TimeInterval) -> SignetAdmin.ClientChange { setting(\.codeLifetime, seconds) }
    static func idle(_ seconds: TimeInterval) -> SignetAdmin.ClientChange { setting(\.refreshTokenIdleLifetime, seconds) }
    static func absolute(_ seconds: TimeInterval) -> SignetAdmin.ClientChange { setting(\.refreshTokenAbsoluteLifetime, seconds) }
    static var idleOverAbsolute: SignetAdmin.ClientChange {
        var change = setting(\.refreshTokenIdleLifetime, 7_200)
        change.refreshTokenAbsoluteLifetime = .some(3_600)
        return change
    }
}
