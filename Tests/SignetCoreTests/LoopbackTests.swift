import SignetCore
import Testing

@Suite("One loopback rule (RFC 8252 §7.3, §8.3) on every surface of the core")
struct LoopbackTests {
    @Test("loopback IP literals are 127.0.0.0/8 and ::1; lookalikes are not")
    func literals() {
        for host in ["127.0.0.1", "127.0.0.2", "127.1.2.3", "127.255.255.255", "::1", "[::1]"] { #expect(Loopback.isIPLiteral(host), "\(host)") }
        for host in [
            "localhost", "127.evil.example", "127.0.0.1.evil.example", "10.0.0.1", "127.0.0", "127.0.0.256", "127.0.0.+1", "127..0.1", "::2",
            "0.0.0.0", "",
        ] {
            #expect(!Loopback.isIPLiteral(host), "\(host)")
        }
        #expect(Loopback.isHost("localhost") && Loopback.isHost("LocalHost") && Loopback.isHost("127.0.0.2"))
        #expect(!Loopback.isHost("localhost.evil.example") && !Loopback.isHost("127.0.0.1.evil.example"))
    }

    @Test("the issuer and endpoint rule of the SDK and the kit: http on 127.0.0.2 and localhost, https elsewhere")
    func endpoints() throws {
        for url in ["http://127.0.0.1:8080", "http://127.0.0.2:8080/token", "http://localhost:9000", "http://[::1]:8080", "https://id.example.com"] {
            #expect(throws: Never.self, "\(url)") { try SecureEndpoint.check(url, name: "issuer") }
        }
        for url in ["http://127.0.0.1.evil.example", "http://id.example.com", "http://10.0.0.1:8080"] {
            #expect(throws: SignetError.self, "\(url)") { try SecureEndpoint.check(url, name: "issuer") }
        }
    }

    @Test("redirect URIs: any loopback IP literal is a loopback redirect matched on any port; localhost is refused for http")
    func redirects() {
        #expect(RedirectURI.classify("http://127.0.0.2/cb") == .success(.loopback))
        #expect(RedirectURI.matches("http://127.0.0.2:51234/cb", registered: ["http://127.0.0.2/cb"]))
        #expect(!RedirectURI.matches("http://127.0.0.1:51234/cb", registered: ["http://127.0.0.2/cb"]), "the address itself must match")
        #expect(RedirectURI.classify("http://localhost/cb") == .failure(.plainHTTP))
        #expect(RedirectURI.classify("http://127.0.0.1.evil.example/cb") == .failure(.plainHTTP))
    }
}

@Suite("One way to add a query: FormParameters.appended(to:)")
struct QueryAppendTests {
    let parameters = FormParameters([(name: "code", value: "a b"), (name: "state", value: "s&t")])

    @Test("? when there is no query, & after one, nothing more after a bare ? or a trailing &; the URL's own query is kept")
    func separators() {
        #expect(parameters.appended(to: "https://rp.example/cb") == "https://rp.example/cb?code=a%20b&state=s%26t")
        #expect(parameters.appended(to: "https://rp.example/cb?x=1") == "https://rp.example/cb?x=1&code=a%20b&state=s%26t")
        #expect(parameters.appended(to: "https://rp.example/cb?") == "https://rp.example/cb?code=a%20b&state=s%26t")
        #expect(parameters.appended(to: "https://rp.example/cb?x=1&") == "https://rp.example/cb?x=1&code=a%20b&state=s%26t")
        #expect(FormParameters().appended(to: "https://rp.example/cb?") == "https://rp.example/cb?", "no parameters: the URL as it is")
    }
}

@Suite("Loopback redirect ports")
struct LoopbackRedirectPortTests {
    @Test("a loopback redirect matches on a port a socket can listen on (1–65535), never 0 or beyond")
    func ports() {
        #expect(RedirectURI.matches("http://127.0.0.1:1/cb", registered: ["http://127.0.0.1/cb"]))
        #expect(RedirectURI.matches("http://127.0.0.1:65535/cb", registered: ["http://127.0.0.1/cb"]))
        #expect(RedirectURI.matches("http://[::1]:8080/cb", registered: ["http://[::1]/cb"]))
        for port in ["0", "65536", "99999", "18446744073709551697", "-1", "+80", "080808"] {
            #expect(!RedirectURI.matches("http://127.0.0.1:\(port)/cb", registered: ["http://127.0.0.1/cb"]), "\(port)")
            #expect(!RedirectURI.matches("http://[::1]:\(port)/cb", registered: ["http://[::1]/cb"]), "\(port)")
        }
    }
}
