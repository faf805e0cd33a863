// Client addresses through trusted proxies only; anti-CSRF tokens keyed with a server secret.
import Foundation
import SignetCore
import SignetServer
import SignetTesting
import Testing

@Suite("Client addresses behind proxies")
struct ForwardedForTests {
    let proxies = ForwardedFor(trustedProxies: [IPNetwork("10.0.0.0/8")!, IPNetwork("2001:db8::/32")!])

    @Test("networks: IPv4 and IPv6 CIDR, single addresses, and nonsense refused")
    func networks() {
        #expect(IPNetwork("10.0.0.0/8")!.contains("10.200.3.4"))
        #expect(!IPNetwork("10.0.0.0/8")!.contains("11.0.0.1"))
        #expect(IPNetwork("192.0.2.7")!.contains("192.0.2.7"))
        #expect(!IPNetwork("192.0.2.7")!.contains("192.0.2.8"))
        #expect(IPNetwork("2001:db8::/32")!.contains("2001:db8:ffff::1"))
        #expect(!IPNetwork("2001:db8::/32")!.contains("2001:db9::1"))
        #expect(IPNetwork("172.16.0.0/12")!.contains("172.31.255.255"))
        #expect(!IPNetwork("172.16.0.0/12")!.contains("172.32.0.0"))
        for bad in ["10.0.0.0/33", "10.0.0.0/", "example.com", "10.0.0.0/-1", "::/129"] { #expect(IPNetwork(bad) == nil, "\(bad)") }
    }

    @Test("headers from a peer that is not a trusted proxy are ignored")
    func untrustedPeer() {
        #expect(proxies.clientAddress(peer: "198.51.100.9", headerValues: ["203.0.113.5"]) == "198.51.100.9")
        #expect(
            ForwardedFor(trustedProxies: [IPNetwork("10.0.0.0/8")!], header: .forwarded).clientAddress(
                peer: "198.51.100.9", headerValues: ["for=203.0.113.5"]) == "198.51.100.9")
        #expect(ForwardedFor(trustedProxies: []).clientAddress(peer: "10.0.0.1", headerValues: ["203.0.113.5"]) == "10.0.0.1")
    }

    @Test("through trusted proxies the nearest untrusted hop is the client; a forged leftmost entry does not count")
    func chains() {
        #expect(proxies.clientAddress(peer: "10.0.0.1", headerValues: ["203.0.113.5"]) == "203.0.113.5")
        #expect(proxies.clientAddress(peer: "10.0.0.1", headerValues: ["1.2.3.4, 203.0.113.5, 10.0.0.2"]) == "203.0.113.5")
        #expect(proxies.clientAddress(peer: "10.0.0.1", headerValues: ["1.2.3.4", "203.0.113.5"]) == "203.0.113.5")
        #expect(proxies.clientAddress(peer: "10.0.0.1", headerValues: ["garbage"]) == "10.0.0.1")
        #expect(proxies.clientAddress(peer: "10.0.0.1", headerValues: []) == "10.0.0.1")
    }

    @Test("RFC 7239 Forwarded, when that is the configured header: quoted IPv6 with port, several elements, obfuscated hops")
    func forwardedHeader() {
        let forwarded = ForwardedFor(trustedProxies: proxies.trustedProxies, header: .forwarded)
        #expect(forwarded.clientAddress(peer: "10.0.0.1", headerValues: [#"for="[2001:db9::7]:4711";proto=https"#]) == "2001:db9::7")
        #expect(forwarded.clientAddress(peer: "10.0.0.1", headerValues: ["for=192.0.2.60;proto=http, for=10.1.1.1"]) == "192.0.2.60")
        #expect(forwarded.clientAddress(peer: "10.0.0.1", headerValues: ["for=_hidden, for=10.1.1.1"]) == "10.1.1.1")
        #expect(forwarded.clientAddress(peer: "2001:db8::1", headerValues: ["For=\"198.51.100.17:80\""]) == "198.51.100.17")
    }

    @Test("only the configured header is read: a client's own Forwarded is ignored behind an X-Forwarded-For proxy")
    func onlyTheConfiguredHeader() async throws {
        try await withTestProvider(configure: {
            $0.throttle.freeFailuresPerAddress = 3
            $0.trustedProxies = [IPNetwork("127.0.0.1/32")!]
        }) { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            try await failThrice(app, header: "203.0.113.1")
            // The proxy appends the real client to X-Forwarded-For; the client adds a Forwarded of its choosing.
            let (_, forged) = try await app.throughPassword(
                scenario: .usernamePassword, username: "nobody7", password: "guess",
                headers: [("X-Forwarded-For", "203.0.113.1"), ("Forwarded", "for=198.51.100.77")])
            #expect(forged.oauthError == "too_many_attempts")
        }
    }

    /// Three wrong passwords for different names, each claiming the address in `header`.
    func failThrice(_ app: NativeApp, header: String) async throws {
        for index in 0..<3 {
            let (_, answer) = try await app.throughPassword(
                scenario: .usernamePassword, username: "nobody\(index)", password: "guess", headers: [("X-Forwarded-For", header)])
            #expect(answer.oauthError == "invalid_credentials")
        }
    }

    @Test("a forged X-Forwarded-For from an untrusted peer does not change the address throttled")
    func forgedHeaderIgnored() async throws {
        try await withTestProvider(configure: { $0.throttle.freeFailuresPerAddress = 3 }) { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            try await failThrice(app, header: "203.0.113.1")
            let (_, other) = try await app.throughPassword(
                scenario: .usernamePassword, username: "nobody9", password: "guess", headers: [("X-Forwarded-For", "203.0.113.99")])
            #expect(other.oauthError == "too_many_attempts")
        }
    }

    @Test("behind a trusted proxy each client address is throttled on its own")
    func trustedProxyAddresses() async throws {
        try await withTestProvider(configure: {
            $0.throttle.freeFailuresPerAddress = 3
            $0.trustedProxies = [IPNetwork("127.0.0.1/32")!]
        }) { provider in
            _ = try await Fixture.make(provider)
            let app = NativeApp(provider)
            try await failThrice(app, header: "203.0.113.1")
            let (_, paused) = try await app.throughPassword(
                scenario: .usernamePassword, username: "nobody8", password: "guess", headers: [("X-Forwarded-For", "203.0.113.1")])
            #expect(paused.oauthError == "too_many_attempts")
            let (_, other) = try await app.throughPassword(
                scenario: .usernamePassword, username: "nobody9", password: "guess", headers: [("X-Forwarded-For", "203.0.113.99")])
            #expect(other.oauthError == "invalid_credentials")
            let (_, alice) = try await app.throughPassword(scenario: .usernamePassword, headers: [("X-Forwarded-For", "203.0.113.99")])
            #expect(alice.json["next_step"] as? String == "finished")
        }
    }

    @Test("the logout page's anti-CSRF token is keyed with a server secret, not derivable from the cookie")
    func logoutTokenIsKeyed() async throws {
        try await withTestProvider { provider in
            let fixture = try await Fixture.make(provider)
            let (browser, token) = try await signedInAtLogoutPage(provider, fixture)
            let binding = try #require(browser.cookieJar["signet_browser"])
            let derivable = SecretDigest.hex("logout:" + binding)
            #expect(token != derivable)
            let forged = try await browser.post(provider.url("/logout"), form: [("csrf_token", derivable)])
            #expect(forged.status == 403)
            #expect(browser.cookieJar["signet_session"] != nil)
            let genuine = try await browser.post(provider.url("/logout"), form: [("csrf_token", token)])
            #expect(genuine.status == 200)
            #expect(browser.cookieJar["signet_session"] == nil)
        }
    }
}
