// The benchmark's load generators: CPUs for the server and the load, requests made beforehand.
import Foundation
import SignetCore
import SignetTesting
import Testing

@testable import signet

@Suite("signet bench: where the load runs and what it sends")
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

    @Test("the server gets the first half of the CPUs (rounded up), the load the rest, and one CPU is not enough")
    func split() throws {
        #expect(try CPUIsolation.split([0, 1]) == CPUIsolation(server: [0], load: [1]))
        #expect(try CPUIsolation.split([2, 0, 1]) == CPUIsolation(server: [0, 1], load: [2]))
        #expect(try CPUIsolation.split([4, 5, 6, 7, 4]) == CPUIsolation(server: [4, 5], load: [6, 7]))
        #expect(throws: (any Error).self) { try CPUIsolation.split([3]) }
        #expect(throws: (any Error).self) { try CPUIsolation.split([3, 3]) }
        let command = try CPUIsolation.split([0, 1]).serverCommand(URL(fileURLWithPath: "/opt/signet"), ["serve", "--port", "1"])
        #expect(command.executable.path == "/usr/bin/taskset")
        #expect(command.arguments == ["--cpu-list", "0", "/opt/signet", "serve", "--port", "1"])
    }

    @Test("a kept token request becomes HTTP/1.1 bytes with its own Host and one Content-Length")
    func requestBytes() throws {
        let request = HTTPTransportRequest(
            method: "POST", url: "http://127.0.0.1:8080/token?x=1",
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("content-length", "999")], body: Data("a=b".utf8))
        let text = String(decoding: try PreparedTokenRequests.bytes(of: request, host: "127.0.0.1:8080"), as: UTF8.self)
        #expect(text == "POST /token?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b")
        #expect(throws: (any Error).self) { try PreparedTokenRequests.bytes(of: HTTPTransportRequest(method: "POST", url: "http://127.0.0.1:8080"), host: "h") }
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
            let notTokens = try PreparedTokenRequests.bytes(of: HTTPTransportRequest(method: "GET", url: provider.url("/.well-known/openid-configuration")), host: host)
            let queue = PreparedTokenRequests.Queue(requests: [refused, notTokens, refused])
            let timing = await PreparedTokenRequests.send(queue, port: port, worker: 1, until: .now + .seconds(60))
            #expect(timing.errors == 3)
            #expect(timing.latencies.isEmpty)
        }
    }

    @Test("a server that is not there is one error for the worker, which stops")
    func noServer() async throws {
        let port = try FreePort.find()
        let queue = PreparedTokenRequests.Queue(requests: [Array("GET / HTTP/1.1\r\n\r\n".utf8)])
        let timing = await PreparedTokenRequests.send(queue, port: port, worker: 1, until: .now + .seconds(60))
        #expect(timing.errors == 1)
        #expect(timing.latencies.isEmpty)
    }
}
