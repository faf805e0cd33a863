import Foundation
import SignetCore
import Synchronization
import Testing

/// A server played in memory: answers with `answer` and keeps every request it got.
final class ScriptedServer: HTTPTransport, Sendable {
    let answer: @Sendable (HTTPTransportRequest, Int) -> HTTPTransportResponse
    private let received = Mutex<[HTTPTransportRequest]>([])

    init(_ answer: @escaping @Sendable (HTTPTransportRequest, Int) -> HTTPTransportResponse) { self.answer = answer }

    var requests: [HTTPTransportRequest] { received.withLock { $0 } }

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        let count = received.withLock { requests in
            requests.append(request)
            return requests.count
        }
        return answer(request, count)
    }
}

@Suite("DPoPTransport: proofs and the nonce retry as middleware over HTTPTransport (RFC 9449 §4, §8, §9)")
struct DPoPTransportTests {
    let key = SoftwareDPoPKey()

    func transport(_ server: ScriptedServer, nonces: DPoPNonces = DPoPNonces()) -> DPoPTransport {
        let key = key
        return DPoPTransport(base: server, key: { key }, nonces: nonces, random: SecureRandom(), now: { Date(timeIntervalSince1970: 1_700_000_000) })
    }

    func claims(of request: HTTPTransportRequest) throws -> [String: Any] {
        let proof = try #require(request.header("DPoP"))
        let jwt = try CompactJWT.parse(proof).get()
        return try #require(try JSONSerialization.jsonObject(with: jwt.claims) as? [String: Any])
    }

    @Test("every request carries one fresh proof naming its method and URL; a DPoP-scheme token is hashed into ath, a Bearer one is not")
    func proofs() async throws {
        let server = ScriptedServer { _, _ in HTTPTransportResponse(status: 200) }
        let dpop = transport(server)
        _ = try await dpop.send(HTTPTransportRequest(method: "POST", url: "https://id.example/token", headers: [("DPoP", "stale")]))
        _ = try await dpop.send(HTTPTransportRequest(method: "GET", url: "https://api.example/a?b=c", headers: [("Authorization", "DPoP tok")]))
        _ = try await dpop.send(HTTPTransportRequest(method: "GET", url: "https://api.example/a", headers: [("Authorization", "Bearer tok")]))
        let requests = server.requests
        #expect(requests.count == 3)
        #expect(requests[0].headers.filter { $0.name == "DPoP" }.count == 1, "the request's own DPoP header is replaced")
        let first = try claims(of: requests[0]), second = try claims(of: requests[1]), third = try claims(of: requests[2])
        #expect(first["htm"] as? String == "POST" && first["htu"] as? String == "https://id.example/token" && first["ath"] == nil)
        #expect(second["htu"] as? String == "https://api.example/a", "htu without the query")
        #expect(second["ath"] as? String == DPoPProofMaker.accessTokenHash("tok"))
        #expect(third["ath"] == nil)
        #expect(first["jti"] as? String != second["jti"] as? String)
    }

    @Test("400 use_dpop_nonce from the provider and a 401 DPoP challenge from a resource are each retried once, with the nonce, built anew")
    func nonceRetry() async throws {
        let server = ScriptedServer { request, count in
            switch (request.url, count) {
            case ("https://id.example/token", 1):
                return HTTPTransportResponse(status: 400, headers: [("DPoP-Nonce", "n-1")], body: Data(#"{"error":"use_dpop_nonce"}"#.utf8))
            case ("https://api.example/r", 3):
                return HTTPTransportResponse(status: 401, headers: [("DPoP-Nonce", "n-2"), ("WWW-Authenticate", #"DPoP error="use_dpop_nonce""#)])
            default: return HTTPTransportResponse(status: 200)
            }
        }
        let dpop = transport(server)
        let built = Mutex(0)
        let token = try await dpop.send(building: {
            built.withLock { $0 += 1 }
            return HTTPTransportRequest(method: "POST", url: "https://id.example/token")
        })
        #expect(token.status == 200)
        #expect(built.withLock { $0 } == 2, "the request is built anew for the second try (a fresh client assertion)")
        let resource = try await dpop.send(HTTPTransportRequest(method: "GET", url: "https://api.example/r", headers: [("Authorization", "DPoP t")]))
        #expect(resource.status == 200)
        let requests = server.requests
        #expect(requests.count == 4)
        #expect(try claims(of: requests[0])["nonce"] == nil)
        #expect(try claims(of: requests[1])["nonce"] as? String == "n-1")
        #expect(try claims(of: requests[2])["nonce"] == nil, "nonces are kept per origin: the API's is not the provider's")
        #expect(try claims(of: requests[3])["nonce"] as? String == "n-2")
        #expect(dpop.nonces.value(for: "https://id.example/other") == "n-1")
    }

    @Test("no retry for a Bearer challenge, another error, a nonce that is empty or too long, or a second request for a nonce")
    func noRetry() async throws {
        let answers: [HTTPTransportResponse] = [
            HTTPTransportResponse(status: 401, headers: [("DPoP-Nonce", "n"), ("WWW-Authenticate", #"Bearer error="use_dpop_nonce""#)]),
            HTTPTransportResponse(status: 400, headers: [("DPoP-Nonce", "n")], body: Data(#"{"error":"invalid_dpop_proof"}"#.utf8)),
            HTTPTransportResponse(status: 400, headers: [("DPoP-Nonce", "")], body: Data(#"{"error":"use_dpop_nonce"}"#.utf8)),
            HTTPTransportResponse(
                status: 400, headers: [("DPoP-Nonce", String(repeating: "x", count: 257))], body: Data(#"{"error":"use_dpop_nonce"}"#.utf8)),
        ]
        for answer in answers {
            let server = ScriptedServer { _, _ in answer }
            let response = try await transport(server).send(HTTPTransportRequest(method: "POST", url: "https://id.example/token"))
            #expect(response.status == answer.status)
            #expect(server.requests.count == 1, "\(answer.headers)")
        }
        // A server that asks every time gets one more try, not a loop.
        let insistent = ScriptedServer { _, count in
            HTTPTransportResponse(status: 400, headers: [("DPoP-Nonce", "n-\(count)")], body: Data(#"{"error":"use_dpop_nonce"}"#.utf8))
        }
        _ = try await transport(insistent).send(HTTPTransportRequest(method: "POST", url: "https://id.example/token"))
        #expect(insistent.requests.count == 2)
    }

    @Test("a key that cannot be had is a ProofFailure carrying what the store threw, and nothing is sent")
    func keyFailure() async throws {
        struct Locked: Error {}
        let server = ScriptedServer { _, _ in HTTPTransportResponse(status: 200) }
        let dpop = DPoPTransport(base: server, key: { throw Locked() }, nonces: DPoPNonces(), random: SecureRandom(), now: Date.init)
        await #expect {
            _ = try await dpop.send(HTTPTransportRequest(method: "GET", url: "https://api.example/r"))
        } throws: { ($0 as? DPoPTransport.ProofFailure)?.underlying is Locked }
        #expect(server.requests.isEmpty)
    }

    @Test("nonces are kept for at most 64 origins: a 65th replaces them all")
    func originsCapped() {
        let nonces = DPoPNonces()
        for host in 0..<DPoPNonces.maximumOrigins { nonces.keep("n\(host)", for: "https://h\(host).example/token") }
        #expect(nonces.value(for: "https://h0.example/x") == "n0")
        #expect(nonces.value(for: "HTTPS://H63.EXAMPLE/y") == "n63", "origins compare without case")
        nonces.keep("again", for: "https://h1.example/token")
        #expect(nonces.value(for: "https://h0.example/") == "n0", "a known origin replaces its own nonce only")
        nonces.keep("new", for: "https://h64.example/token")
        #expect(nonces.value(for: "https://h0.example/") == nil)
        #expect(nonces.value(for: "https://h64.example/") == "new")
        #expect(nonces.value(for: "https://h64.example:8443/") == nil, "the port is part of the origin")
        #expect(nonces.value(for: "https://h64.example:443/x") == "new", "the default port is the same origin")
    }
}
