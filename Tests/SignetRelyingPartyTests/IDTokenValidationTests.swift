// ID-token validation: each reason a token is refused, and the bounded JWKS refetch.
import Crypto
import CryptoExtras
import JWTKit
import Foundation
import SignetCore
import SignetJOSE
import SignetRelyingParty
import SignetTesting
import Testing

@Suite("ID token validation")
struct IDTokenValidationTests {
    let provider = FakeProvider()
    let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))
    let pending = PendingAuthorization(state: "s", nonce: "nonce-1", codeVerifier: "v", redirectURI: "https://service.example.com/cb")
    let relyingParty: RelyingParty

    init() { relyingParty = makeRelyingParty(provider, clock: clock) }

    func validate(_ token: String, accessToken: String? = nil) async throws -> IDTokenValidationResult {
        try await relyingParty.validateIDToken(token, pending: pending, accessToken: accessToken)
    }

    @Test("A token signed by the provider with the right claims is valid")
    func valid() async throws {
        let claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        let token = try await provider.sign(claims)
        #expect(try await validate(token) == .valid(claims))
    }

    @Test("A token from another issuer is refused")
    func wrongIssuer() async throws {
        var claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        claims.iss = "https://evil.example.com"
        #expect(try await validate(provider.sign(claims)) == .invalid([.wrongIssuer]))
    }

    @Test("A token for another client is refused")
    func wrongAudience() async throws {
        var claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        claims.aud = ["another-client"]
        #expect(try await validate(provider.sign(claims)) == .invalid([.wrongAudience]))
    }

    @Test("A token is refused once exp plus the leeway has passed, and not before")
    func expired() async throws {
        let token = try await provider.sign(provider.claims(now: clock.seconds, nonce: "nonce-1"))
        clock.advance(by: 600 + 59)
        #expect(try await validate(token).claims != nil)
        clock.advance(by: 1)
        #expect(try await validate(token) == .invalid([.expired]))
    }

    @Test("A token with another nonce, or none, is refused")
    func nonceMismatch() async throws {
        for nonce in ["nonce-2", nil] {
            let token = try await provider.sign(provider.claims(now: clock.seconds, nonce: nonce))
            #expect(try await validate(token) == .invalid([.nonceMismatch]))
        }
    }

    @Test("Every failing claim is reported, not just the first")
    func allFailures() async throws {
        var claims = provider.claims(now: clock.seconds, nonce: "other")
        claims.iss = "https://evil.example.com"
        claims.aud = ["x"]
        #expect(try await validate(provider.sign(claims)) == .invalid([.wrongIssuer, .wrongAudience, .nonceMismatch]))
    }

    @Test("An unsigned alg none token is refused before any key is fetched")
    func algNone() async throws {
        let claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        #expect(try await validate(provider.unsigned(claims, signature: "AAAA")) == .invalid([.unacceptableAlgorithm]))
        // With the empty signature `none` really uses, the token is not even a compact JWS.
        #expect(try await validate(provider.unsigned(claims, signature: "")) == .invalid([.malformed]))
        #expect(await provider.count("/jwks") == 0)
    }

    @Test("An HS256 token is refused before any key is fetched, whatever its MAC key")
    func hmac() async throws {
        let claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        let token = try await provider.signHS256(claims, secret: "a-client-secret-of-thirty-two-bytes-or-more")
        #expect(try await validate(token) == .invalid([.unacceptableAlgorithm]))
        #expect(await provider.count("/jwks") == 0)
    }

    @Test("A token whose payload was altered after signing has a bad signature")
    func tampered() async throws {
        let token = try await provider.sign(provider.claims(now: clock.seconds, nonce: "nonce-1"))
        var forged = provider.claims(now: clock.seconds, nonce: "nonce-1")
        forged.sub = "admin"
        let parts = token.split(separator: ".")
        let swapped = "\(parts[0]).\(try JSONEncoder().encode(forged).base64URLEncodedString()).\(parts[2])"
        #expect(try await validate(swapped) == .invalid([.badSignature]))
    }

    @Test("A token signed by another key under a published kid has a bad signature")
    func wrongKey() async throws {
        let token = try await provider.sign(provider.claims(now: clock.seconds, nonce: "nonce-1"), key: P256.Signing.PrivateKey())
        #expect(try await validate(token) == .invalid([.badSignature]))
    }

    @Test("A token that is not a JWS, or whose claims are not an ID token, is malformed")
    func malformed() async throws {
        #expect(try await validate("not-a-jwt") == .invalid([.malformed]))
        #expect(try await validate("a.b.c") == .invalid([.malformed]))
    }

    @Test("at_hash must match the access token when both are present")
    func atHash() async throws {
        var claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        claims.atHash = TokenHash.sha256Half(of: "access-1")
        let token = try await provider.sign(claims)
        #expect(try await validate(token, accessToken: "access-1") == .valid(claims))
        #expect(try await validate(token, accessToken: "access-2") == .invalid([.atHashMismatch]))
        #expect(try await validate(token) == .valid(claims))
    }

    @Test("When max_age was sent, auth_time must be present and recent enough")
    func maxAge() async throws {
        var withMaxAge = pending
        withMaxAge.maxAge = 300
        var claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        claims.authTime = clock.seconds - 1000
        #expect(try await relyingParty.validateIDToken(provider.sign(claims), pending: withMaxAge) == .invalid([.authTooOld]))
        claims.authTime = nil
        #expect(try await relyingParty.validateIDToken(provider.sign(claims), pending: withMaxAge) == .invalid([.missingAuthTime]))
    }

    @Test("A token without kid is checked with the provider's only key")
    func noKid() async throws {
        let claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        #expect(try await validate(provider.sign(claims, kid: nil)) == .valid(claims))
    }

    @Test("A provider whose keys cannot be fetched makes validation throw, not judge")
    func unreachableKeys() async throws {
        let relyingParty = RelyingParty(
            configuration: RelyingPartyConfiguration(issuer: FakeProvider.issuer, clientID: FakeProvider.clientID, clientAuthentication: .none),
            transport: FailingTransport(after: provider), now: clock.read)
        let token = try await provider.sign(provider.claims(now: clock.seconds, nonce: "nonce-1"))
        await #expect(throws: SignetError(.transportFailure, "")) {
            try await relyingParty.validateIDToken(token, pending: pending)
        }
    }

    @Test("A token whose claims set or header repeats a member is refused, whichever copy a decoder would keep")
    func repeatedMember() async throws {
        let claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        let json = String(decoding: try JSONEncoder().encode(claims), as: UTF8.self)
        let header = #"{"alg":"ES256","kid":"key-1"}"#
        /// Signs the exact texts with the provider's key, as no JWT library would.
        func sign(_ header: String, _ claims: String) throws -> String {
            let input = Data(header.utf8).base64URLEncodedString() + "." + Data(claims.utf8).base64URLEncodedString()
            return input + "." + (try provider.signingKey.signature(for: Data(input.utf8))).rawRepresentation.base64URLEncodedString()
        }
        #expect(try await validate(sign(header, json)) == .valid(claims))
        let evil = #""iss":"https://evil.example.com""#
        let issFirst = "{" + evil + "," + json.dropFirst()
        let issLast = json.dropLast() + "," + evil + "}"
        #expect(try await validate(sign(header, issFirst)) == .invalid([.repeatedMember]))
        #expect(try await validate(sign(header, String(issLast))) == .invalid([.repeatedMember]))
        #expect(try await validate(sign(#"{"alg":"ES256","kid":"key-1","alg":"ES256"}"#, json)) == .invalid([.repeatedMember]))
    }
}

/// Serves discovery from `provider` and fails everything else, as a provider whose JWKS host is down.
struct FailingTransport: HTTPTransport {
    let after: FakeProvider
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        if request.url.hasSuffix("/.well-known/openid-configuration") { return try await after.send(request) }
        throw URLError(.cannotConnectToHost)
    }
}

@Suite("JWKS cache")
struct KeySetTests {
    let provider = FakeProvider()
    let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))
    let pending = PendingAuthorization(state: "s", nonce: "n", codeVerifier: "v", redirectURI: "https://service.example.com/cb")

    /// A token signed by a key the provider has not published, under `kid`.
    func strangerToken(kid: String) async throws -> String {
        try await provider.sign(provider.claims(now: clock.seconds, nonce: "n"), kid: kid, key: P256.Signing.PrivateKey())
    }

    @Test("Keys are fetched once and reused while every kid is known")
    func cached() async throws {
        let relyingParty = makeRelyingParty(provider, clock: clock)
        for _ in 0..<5 {
            let token = try await provider.sign(provider.claims(now: clock.seconds, nonce: "n"))
            #expect(try await relyingParty.validateIDToken(token, pending: pending).claims != nil)
        }
        #expect(await provider.count("/jwks") == 1)
        #expect(await provider.count("/.well-known/openid-configuration") == 1)
    }

    @Test("An unknown kid triggers exactly one refetch; another within 60 s triggers none; after 60 s one more")
    func boundedRefetch() async throws {
        let relyingParty = makeRelyingParty(provider, clock: clock)
        let good = try await provider.sign(provider.claims(now: clock.seconds, nonce: "n"))
        #expect(try await relyingParty.validateIDToken(good, pending: pending).claims != nil)
        #expect(await provider.count("/jwks") == 1)

        clock.advance(by: 3600)
        #expect(try await relyingParty.validateIDToken(strangerToken(kid: "unknown-1"), pending: pending) == .invalid([.unknownKey]))
        #expect(await provider.count("/jwks") == 2)

        clock.advance(by: 59)
        #expect(try await relyingParty.validateIDToken(strangerToken(kid: "unknown-2"), pending: pending) == .invalid([.unknownKey]))
        #expect(try await relyingParty.validateIDToken(strangerToken(kid: "unknown-1"), pending: pending) == .invalid([.unknownKey]))
        #expect(await provider.count("/jwks") == 2)

        clock.advance(by: 1)
        #expect(try await relyingParty.validateIDToken(strangerToken(kid: "unknown-3"), pending: pending) == .invalid([.unknownKey]))
        #expect(await provider.count("/jwks") == 3)
    }

    @Test("A flood of concurrent unknown kids shares one refetch")
    func concurrentMisses() async throws {
        let relyingParty = makeRelyingParty(provider, clock: clock)
        _ = try await relyingParty.validateIDToken(provider.sign(provider.claims(now: clock.seconds, nonce: "n")), pending: pending)
        clock.advance(by: 3600)
        var tokens: [String] = []
        for index in 0..<25 { tokens.append(try await strangerToken(kid: "flood-\(index)")) }
        let results = try await withThrowingTaskGroup(of: IDTokenValidationResult.self) { group in
            for token in tokens { group.addTask { try await relyingParty.validateIDToken(token, pending: pending) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 25 && results.allSatisfy { $0 == .invalid([.unknownKey]) })
        #expect(await provider.count("/jwks") == 2)
    }

    @Test("A rotated-in key is picked up by the one refetch its kid causes")
    func rotation() async throws {
        let relyingParty = makeRelyingParty(provider, clock: clock)
        _ = try await relyingParty.validateIDToken(provider.sign(provider.claims(now: clock.seconds, nonce: "n")), pending: pending)
        clock.advance(by: 120)
        let newKey = P256.Signing.PrivateKey()
        await provider.publish([PublicJWK(p256: provider.signingKey.publicKey, kid: "key-1"), PublicJWK(p256: newKey.publicKey, kid: "key-2")])
        let claims = provider.claims(now: clock.seconds, nonce: "n")
        #expect(try await relyingParty.validateIDToken(provider.sign(claims, kid: "key-2", key: newKey), pending: pending) == .valid(claims))
        #expect(await provider.count("/jwks") == 2)
    }

    @Test("Keys older than the maximum age are fetched again, and withdrawn keys stop verifying")
    func maximumAge() async throws {
        let relyingParty = makeRelyingParty(provider, clock: clock)
        let token = try await provider.sign(provider.claims(now: clock.seconds, nonce: "n"))
        #expect(try await relyingParty.validateIDToken(token, pending: pending).claims != nil)
        await provider.publish([])
        clock.advance(by: 86_400)
        let later = try await provider.sign(provider.claims(now: clock.seconds, nonce: "n"))
        #expect(try await relyingParty.validateIDToken(later, pending: pending) == .invalid([.unknownKey]))
        #expect(await provider.count("/jwks") == 2)
    }

    @Test("Encryption keys, symmetric keys and unreadable entries in the JWKS are ignored")
    func unusableKeys() async throws {
        let cache = JWKSCache(jwksURI: FakeProvider.issuer + "/jwks", transport: provider, now: clock.read)
        await provider.publish([
            PublicJWK(kty: "oct", kid: "sym", use: "sig", alg: "HS256"),
            PublicJWK(kty: "EC", kid: "enc", use: "enc", alg: nil, crv: "P-256", x: "AA", y: "AA"),
            PublicJWK(p256: provider.signingKey.publicKey, kid: "key-1"),
        ])
        #expect(try await cache.key(for: "key-1")?.jwk.kid == "key-1")
        #expect(await cache.currentKeys.map(\.kid) == ["key-1"])
        #expect(try await cache.key(for: "sym") == nil)
    }

    @Test("A key is used only with the algorithm it was made for")
    func keyAlgorithms() async throws {
        let cache = JWKSCache(jwksURI: FakeProvider.issuer + "/jwks", transport: provider, now: clock.read)
        let key = try #require(try await cache.key(for: "key-1"))
        #expect(key.accepts(algorithm: "ES256"))
        for other in ["ES384", "RS256", "PS256", "EdDSA", "HS256", "none"] { #expect(!key.accepts(algorithm: other)) }
    }
}

@Suite("Key types other providers use")
struct OtherKeyTypeTests {
    let provider = FakeProvider()
    let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))
    let pending = PendingAuthorization(state: "s", nonce: "n", codeVerifier: "v", redirectURI: "https://service.example.com/cb")

    @Test("RS256 and PS256 tokens verify with an RSA key published without alg, and at_hash uses SHA-256")
    func rsa() async throws {
        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try rsaKey.publicKey.getKeyPrimitives()
        await provider.publish([
            PublicJWK(
                kty: "RSA", kid: "rsa-1", use: "sig", alg: nil,
                n: primitives.modulus.base64URLEncodedString(), e: primitives.publicExponent.base64URLEncodedString())
        ])
        let relyingParty = makeRelyingParty(provider, clock: clock)
        var claims = provider.claims(now: clock.seconds, nonce: "n")
        claims.atHash = TokenHash.sha256Half(of: "at")

        let pkcs1 = JWTKeyCollection()
        await pkcs1.add(rsa: try Insecure.RSA.PrivateKey(backing: rsaKey), digestAlgorithm: .sha256, kid: "rsa-1")
        let rs256 = try await pkcs1.sign(claims, kid: "rsa-1")
        #expect(JOSEHeader(compact: rs256)?.alg == "RS256")
        #expect(try await relyingParty.validateIDToken(rs256, pending: pending, accessToken: "at") == .valid(claims))

        let pss = JWTKeyCollection()
        await pss.add(pss: try Insecure.RSA.PrivateKey(backing: rsaKey), digestAlgorithm: .sha256, kid: "rsa-1")
        let ps256 = try await pss.sign(claims, kid: "rsa-1")
        #expect(JOSEHeader(compact: ps256)?.alg == "PS256")
        #expect(try await relyingParty.validateIDToken(ps256, pending: pending, accessToken: "at") == .valid(claims))
    }

    @Test("EdDSA tokens verify with an Ed25519 key, and at_hash uses SHA-512")
    func eddsa() async throws {
        let edKey = try EdDSA.PrivateKey(curve: .ed25519)
        await provider.publish([
            PublicJWK(
                kty: "OKP", kid: "ed-1", use: "sig", alg: "EdDSA", crv: "Ed25519", x: edKey.publicKey.rawRepresentation.base64URLEncodedString())
        ])
        let relyingParty = makeRelyingParty(provider, clock: clock)
        var claims = provider.claims(now: clock.seconds, nonce: "n")
        claims.atHash = Data(Array(SHA512.hash(data: Data("at".utf8))).prefix(32)).base64URLEncodedString()
        let keys = JWTKeyCollection()
        await keys.add(eddsa: edKey, kid: "ed-1")
        let token = try await keys.sign(claims, kid: "ed-1")
        #expect(try await relyingParty.validateIDToken(token, pending: pending, accessToken: "at") == .valid(claims))
        #expect(try await relyingParty.validateIDToken(token, pending: pending, accessToken: "other") == .invalid([.atHashMismatch]))
    }

    @Test("A token whose alg does not fit the key its kid names is refused")
    func algorithmKeyMismatch() async throws {
        let edKey = try EdDSA.PrivateKey(curve: .ed25519)
        await provider.publish([
            PublicJWK(kty: "OKP", kid: "key-1", use: "sig", alg: nil, crv: "Ed25519", x: edKey.publicKey.rawRepresentation.base64URLEncodedString())
        ])
        let token = try await provider.sign(provider.claims(now: clock.seconds, nonce: "n"))
        #expect(try await makeRelyingParty(provider, clock: clock).validateIDToken(token, pending: pending) == .invalid([.badSignature]))
    }
}

@Suite("ID token validation: acr")
struct IDTokenACRTests {
    let provider = FakeProvider()
    let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))

    @Test("an ID token whose acr is weaker than the acr_values asked for is refused; an equal or stronger one is valid")
    func acrDowngrade() async throws {
        let relyingParty = makeRelyingParty(provider, clock: clock)
        let pending = PendingAuthorization(
            state: "s", nonce: "nonce-1", codeVerifier: "v", redirectURI: "https://service.example.com/cb", acrValues: [AssuranceLevel.twoFactors])
        var claims = provider.claims(now: clock.seconds, nonce: "nonce-1")
        claims.acr = AssuranceLevel.oneFactor
        #expect(try await relyingParty.validateIDToken(provider.sign(claims), pending: pending) == .invalid([.acrNotSatisfied]))
        claims.acr = nil
        #expect(try await relyingParty.validateIDToken(provider.sign(claims), pending: pending) == .invalid([.acrNotSatisfied]))
        claims.acr = AssuranceLevel.twoFactors
        #expect(try await relyingParty.validateIDToken(provider.sign(claims), pending: pending) == .valid(claims))
        #expect(pending.description.contains(AssuranceLevel.twoFactors))
    }
}
