// The benchmark's load generators: CPUs for the server and the load, requests made beforehand.
import Foundation
import SignetCore
import SignetRelyingParty
import SignetScript
import SignetServer
import SignetTesting
import Testing

@testable import signet_bench

@Suite("signet-bench: where the load runs and what it sends")
struct BenchLoadTests {
    @Test("kernel CPU lists are read as the kernel writes them, and anything else is refused")
    func cpuLists() throws {
        #expect(try CPUIsolation.parseList("0-1") == [0, 1])
        #expect(try CPUIsolation.parseList("0,2-3,7") == [0, 2, 3, 7])
        #expect(try CPUIsolation.parseList("5") == [5])
        for bad in ["", "a", "3-1", "1-2-3", "-1", "0,,1", "0-", "1,x"] {
            #expect(throws: (any Error).self, "\(bad)") { try CPUIsolation.parseList(bad) }
        }
    }

    @Test(
        "the server gets the first half of the cores (rounded up), the load the rest; one core's threads are split and said so; one CPU is not enough"
    )
    func split() throws {
        #expect(try CPUIsolation.split([0, 1]) == CPUIsolation(server: [0], load: [1]))
        #expect(try CPUIsolation.split([2, 0, 1]) == CPUIsolation(server: [0, 1], load: [2]))
        #expect(try CPUIsolation.split([4, 5, 6, 7, 4]) == CPUIsolation(server: [4, 5], load: [6, 7]))
        // Two cores of two threads each, numbered as Linux often does (cpu N and N+2 share a core):
        // whole cores go to each side, never a core's two threads to both.
        let twoCores = try CPUIsolation.split([0, 1, 2, 3]) { ["a", "b", "a", "b"][$0] }
        #expect(twoCores == CPUIsolation(server: [0, 2], load: [1, 3]))
        // Cores of unequal size (a hybrid processor): whole cores until the server has half the CPUs.
        let hybrid = try CPUIsolation.split([0, 1, 2, 3, 4, 5]) { $0 < 2 ? "big" : "small\($0)" }
        #expect(hybrid == CPUIsolation(server: [0, 1, 2], load: [3, 4, 5]))
        #expect(try CPUIsolation.split([0, 1, 2, 3]) { $0 < 2 ? "big" : "small\($0)" } == CPUIsolation(server: [0, 1], load: [2, 3]))
        let oneCore = try CPUIsolation.split([0, 1]) { _ in "only" }
        #expect(oneCore == CPUIsolation(server: [0], load: [1], sharesCore: true))
        #expect(throws: (any Error).self) { try CPUIsolation.split([3]) }
        #expect(throws: (any Error).self) { try CPUIsolation.split([3, 3]) }
        let isolation = try CPUIsolation.split([0, 1])
        let command = isolation.serverCommand(URL(fileURLWithPath: "/opt/signet"), ["serve", "--port", "1"])
        #expect(command.executable.path == "/usr/bin/taskset")
        #expect(command.arguments == ["--cpu-list", "0", "/opt/signet", "serve", "--port", "1"])
    }

    @Test("a worker's queue gives what was made oldest first, then nothing")
    func queueOrder() {
        let queue = PreparedQueue([1, 2, 3])
        #expect([queue.next(), queue.next(), queue.next(), queue.next()] == [1, 2, 3, nil])
    }

    @Test("a kept token request becomes HTTP/1.1 bytes with its own Host and one Content-Length")
    func requestBytes() throws {
        let request = HTTPTransportRequest(
            method: "POST", url: "http://127.0.0.1:8080/token?x=1",
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("content-length", "999")], body: Data("a=b".utf8))
        let text = String(decoding: try PreparedTokenRequests.bytes(of: request, host: "127.0.0.1:8080"), as: UTF8.self)
        #expect(
            text
                == "POST /token?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b"
        )
        #expect(throws: (any Error).self) {
            try PreparedTokenRequests.bytes(of: HTTPTransportRequest(method: "POST", url: "http://127.0.0.1:8080"), host: "h")
        }
    }

    @Test("only a JSON object with an access, an ID and a refresh token counts as a token response")
    func tokenResponses() {
        let good = #"{"access_token":"a","id_token":"i","refresh_token":"r","token_type":"Bearer"}"#
        #expect(PreparedTokenRequests.isTokenResponse(ArraySlice(good.utf8)))
        for bad in [
            #"{"access_token":"a","refresh_token":"r"}"#, #"{"access_token":"a","id_token":"","refresh_token":"r"}"#,
            #"{"access_token":1,"id_token":"i","refresh_token":"r"}"#, #"["access_token"]"#, "not json", "",
        ] {
            #expect(!PreparedTokenRequests.isTokenResponse(ArraySlice(bad.utf8)), "\(bad)")
        }
    }

    @Test("against a real server, a refused token request and a 200 that is no token response are errors, not requests done")
    func answersAreChecked() async throws {
        try await withTestProvider { provider in
            let port = try #require(URLComponents(string: provider.issuer)?.port)
            let host = "127.0.0.1:\(port)"
            let refused = try PreparedTokenRequests.bytes(
                of: HTTPTransportRequest(
                    method: "POST", url: provider.url("/token"), headers: [("Content-Type", "application/x-www-form-urlencoded")],
                    body: Data("grant_type=authorization_code&code=nothing&client_id=nobody".utf8)), host: host)
            let notTokens = try PreparedTokenRequests.bytes(
                of: HTTPTransportRequest(method: "GET", url: provider.url("/.well-known/openid-configuration")), host: host)
            let queue = PreparedTokenRequests.Queue([refused, notTokens, refused].map { PreparedTokenRequests.Request(bytes: $0, made: .now) })
            let timing = await PreparedTokenRequests.send(queue, port: port, until: .now + .seconds(60), firstError: FirstErrorReport())
            #expect(timing.errors == 3)
            #expect(timing.latencies.isEmpty)
            // A request whose assertion would be near its end is not sent: the worker stops, no error.
            let stale = PreparedTokenRequests.Request(bytes: refused, made: .now - PreparedTokenRequests.freshFor - .seconds(1))
            let stopped = await PreparedTokenRequests.send(
                PreparedTokenRequests.Queue([stale, stale]), port: port, until: .now + .seconds(60), firstError: FirstErrorReport())
            #expect(stopped.errors == 0)
            #expect(stopped.latencies.isEmpty)
        }
    }

    @Test("a request the relying-party kit built beforehand gets its tokens once over one keep-alive connection; the same bytes again are refused")
    func preparedExchange() async throws {
        // The provider's time an hour behind the machine's: the requests must be signed at the
        // backend's time, not the machine's, or they would be an hour in its future.
        try await withTestProvider(clock: TestClock(start: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded(.down)))) {
            provider in
            let key = ClientKeyPair()
            _ = try await provider.admin.addClient(
                SignetAdmin.NewClient(
                    id: "service", name: "Service", authMethod: .privateKeyJWT, redirectURIs: ["com.example.service:/cb"], jwks: key.publicJWKS))
            _ = try await provider.admin.addUser(username: "bob", password: "a long passphrase")
            let clock = provider.clock
            let backend = RelyingParty(
                configuration: RelyingPartyConfiguration(
                    issuer: provider.issuer, clientID: "service", clientAuthentication: .privateKeyJWT(privateKey: key.privateKey, keyID: key.keyID)),
                now: { clock.now })
            let request = try await backend.makeAuthorizationRequest(redirectURI: "com.example.service:/cb", scope: "openid")
            let login = try await provider.submitLogin(
                at: request.url.absoluteString, browser: ScriptedBrowser(), username: "bob", password: "a long passphrase")
            // A 303 to the redirect URI; anything else (the page again, an error) says why.
            try #require(login.status == 303, "\(login.status) \(login.body.prefix(300))")
            let code = try backend.handleRedirect(try #require(login.header("Location").flatMap(URL.init(string:))), pending: request.pending)
            let port = try #require(URLComponents(string: provider.issuer)?.port)
            let made = try await PreparedTokenRequests.make(
                codes: [PreparedCodes.Queue(codes: [code], pending: request.pending)], backend: backend, hostAndPort: "127.0.0.1:\(port)")
            let prepared = try #require(made.first?.next())
            let timing = await PreparedTokenRequests.send(
                PreparedTokenRequests.Queue([prepared, prepared]), port: port, until: .now + .seconds(60), firstError: FirstErrorReport())
            #expect(timing.latencies.count == 1)
            #expect(timing.errors == 1)
        }
    }

    @Test("a server that is not there is one error for the worker, which stops")
    func noServer() async throws {
        let port = try FreePort.find()
        let queue = PreparedTokenRequests.Queue([PreparedTokenRequests.Request(bytes: Array("GET / HTTP/1.1\r\n\r\n".utf8), made: .now)])
        let timing = await PreparedTokenRequests.send(queue, port: port, until: .now + .seconds(60), firstError: FirstErrorReport())
        #expect(timing.errors == 1)
        #expect(timing.latencies.isEmpty)
    }
}
