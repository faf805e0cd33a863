import SignetCore
import Testing

@Suite("Redirect URI matching (RFC 6749 §3.1.2, RFC 8252 §7)")
struct RedirectURITests {
    @Test("a registered URI matches itself exactly")
    func exactMatch() {
        #expect(RedirectURI.matches("com.example.app:/cb", registered: ["com.example.app:/cb"]))
        #expect(RedirectURI.matches("https://app.example.com/cb", registered: ["https://app.example.com/cb"]))
    }

    @Test(
        "near misses do not match: extra path, query, fragment, userinfo, case, port on https",
        arguments: [
            "https://app.example.com/cb/extra", "https://app.example.com/cb?x=1", "https://app.example.com/cb#frag",
            "https://evil@app.example.com/cb", "https://APP.example.com/cb", "https://app.example.com/CB", "https://app.example.com:8443/cb",
            "https://app.example.com/cb/", "https://app.example.com.evil.com/cb", "http://app.example.com/cb",
        ])
    func nearMisses(requested: String) {
        #expect(!RedirectURI.matches(requested, registered: ["https://app.example.com/cb"]))
    }

    @Test("loopback IP literals match on any port (RFC 8252 §7.3)")
    func loopbackAnyPort() {
        #expect(RedirectURI.matches("http://127.0.0.1:51234/callback", registered: ["http://127.0.0.1/callback"]))
        #expect(RedirectURI.matches("http://127.0.0.1/callback", registered: ["http://127.0.0.1:8000/callback"]))
        #expect(RedirectURI.matches("http://[::1]:6000/cb", registered: ["http://[::1]/cb"]))
    }

    @Test("loopback still needs the same path, query and host; localhost is matched exactly")
    func loopbackStrictOtherwise() {
        #expect(!RedirectURI.matches("http://127.0.0.1:5000/other", registered: ["http://127.0.0.1/callback"]))
        #expect(!RedirectURI.matches("http://127.0.0.1:5000/callback?x=1", registered: ["http://127.0.0.1/callback"]))
        #expect(!RedirectURI.matches("http://127.0.0.2:5000/callback", registered: ["http://127.0.0.1/callback"]))
        #expect(!RedirectURI.matches("http://user@127.0.0.1:5000/callback", registered: ["http://127.0.0.1/callback"]))
        #expect(!RedirectURI.matches("http://localhost:5000/callback", registered: ["http://localhost/callback"]))
    }

    @Test("registration accepts the three native kinds and refuses dangerous ones")
    func registration() {
        #expect(RedirectURI.classify("com.example.app:/cb") == .success(.privateUseScheme))
        #expect(RedirectURI.classify("https://app.example.com/cb") == .success(.claimedHTTPS))
        #expect(RedirectURI.classify("http://127.0.0.1/cb") == .success(.loopback))
        #expect(RedirectURI.classify("http://example.com/cb") == .failure(.plainHTTP))
        #expect(RedirectURI.classify("https://example.com/cb#x") == .failure(.fragment))
        #expect(RedirectURI.classify("javascript:alert(1)") == .failure(.dangerousScheme))
        #expect(RedirectURI.classify("myapp:/cb") == .failure(.schemeNotReverseDomain))
        #expect(RedirectURI.classify("https://u:p@example.com/cb") == .failure(.userinfo))
    }
}
