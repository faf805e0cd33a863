// The resource server's access-token verifier: every check of RFC 9068 §4 and RFC 9449 §7, each as a value.
import Crypto
import Foundation
import SignetCore
import SignetRelyingParty
import SignetTesting
import Testing

/// Makes access tokens and DPoP proofs by hand, so tests can make every wrong one.
struct AccessTokenForge {
    static let api = "https://api.example.com"
    static let url = "https://api.example.com/accounts"

    let provider: FakeProvider
    let clock: TestClock
    let dpopKey = P256.Signing.PrivateKey()

    /// The public JWK of `key` as a DPoP proof carries it.
    static func publicJWK(_ key: P256.Signing.PrivateKey) -> [String: Any] {
        let jwk = PublicJWK(p256: key.publicKey, kid: "")
        return ["kty": "EC", "crv": "P-256", "x": jwk.x ?? "", "y": jwk.y ?? ""]
    }

    var jkt: String { JWKThumbprint.sha256(of: Self.publicJWK(dpopKey))! }

    /// Claims of a valid token for the API, bound to ``dpopKey`` unless `bound` is false.
    func claims(bound: Bool = true, scope: String = "openid accounts", acr: String? = AssuranceLevel.oneFactor) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": FakeProvider.issuer, "sub": "user-1", "aud": [Self.api, FakeProvider.issuer], "client_id": "app",
            "iat": clock.seconds, "exp": clock.seconds + 600, "jti": UUID().uuidString, "scope": scope, "grant_id": "g",
        ]
        if let acr { claims["acr"] = acr }
        if bound { claims["cnf"] = ["jkt": jkt] }
        return claims
    }

    /// A JWS of `claims` under `header` (default ES256, kid key-1, typ at+jwt), signed with `key` (default the provider's).
    func token(_ claims: [String: Any], header: [String: Any] = [:], key: P256.Signing.PrivateKey? = nil) throws -> String {
        let fullHeader = ["alg": "ES256", "kid": "key-1", "typ": "at+jwt"].merging(header) { $1 }
        return try Self.es256(header: fullHeader, claims: claims, key: key ?? provider.signingKey)
    }

    /// A DPoP proof for `method` and `url` with `ath` of `accessToken`.
    func proof(
        _ method: String = "GET", _ url: String = Self.url, accessToken: String?, iat: Date? = nil, jti: String = UUID().uuidString,
        key: P256.Signing.PrivateKey? = nil, header: [String: Any] = [:]
    ) throws -> String {
        let signer = key ?? dpopKey
        var claims: [String: Any] = ["htm": method, "htu": url, "iat": Int((iat ?? clock.now).timeIntervalSince1970), "jti": jti]
        if let accessToken { claims["ath"] = Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString() }
        let fullHeader = ["typ": "dpop+jwt", "alg": "ES256", "jwk": Self.publicJWK(signer)].merging(header) { $1 }
        return try Self.es256(header: fullHeader, claims: claims, key: signer)
    }

    static func es256(header: [String: Any], claims: [String: Any], key: P256.Signing.PrivateKey) throws -> String {
        let input = try encode(header) + "." + encode(claims)
        return input + "." + (try key.signature(for: Data(input.utf8))).rawRepresentation.base64URLEncodedString()
    }

    static func encode(_ object: [String: Any]) throws -> String {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).base64URLEncodedString()
    }
}

@Suite("Access token verifier (RFC 9068, RFC 9449 §7)")
struct AccessTokenVerifierTests {
    let provider = FakeProvider()
    let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))
    let forge: AccessTokenForge

    init() { forge = AccessTokenForge(provider: provider, clock: clock) }

    func verifier(
        requireSenderConstrained: Bool = true, minimumACR: String? = nil, replayCache: any DPoPReplayCache = MemoryDPoPReplayCache()
    ) -> AccessTokenVerifier {
        AccessTokenVerifier(
            configuration: AccessTokenVerifierConfiguration(
                issuer: FakeProvider.issuer, audience: AccessTokenForge.api, requireSenderConstrained: requireSenderConstrained,
                minimumACR: minimumACR),
            transport: provider, replayCache: replayCache, now: clock.read)
    }

    /// A request for the accounts resource with `Authorization: <scheme> <token>` and a proof.
    func request(_ token: String, scheme: String = "DPoP", proof: String? = nil, method: String = "GET") -> ProtectedResourceRequest {
        ProtectedResourceRequest(method: method, url: AccessTokenForge.url, authorization: ["\(scheme) \(token)"], dpop: proof.map { [$0] } ?? [])
    }

    /// A DPoP-bound token and a fresh proof for it.
    func boundRequest(_ claims: [String: Any]? = nil, header: [String: Any] = [:], key: P256.Signing.PrivateKey? = nil) throws
        -> ProtectedResourceRequest
    {
        let token = try forge.token(claims ?? forge.claims(), header: header, key: key)
        return request(token, proof: try forge.proof(accessToken: token))
    }

    func reason(_ verification: AccessTokenVerification) -> AccessTokenFailure.Reason? { verification.failure?.reason }

    @Test("a DPoP-bound token with a fresh proof of its key passes, and the route learns sub, client_id, scopes, acr and the key")
    func valid() async throws {
        let result = try await verifier().verify(try boundRequest(), requiredScopes: ["accounts"])
        let token = try #require(result.token, "\(String(describing: result.failure))")
        #expect(token.subject == "user-1")
        #expect(token.clientID == "app")
        #expect(token.scopes == ["openid", "accounts"])
        #expect(token.acr == AssuranceLevel.oneFactor)
        #expect(token.dpopThumbprint == forge.jkt)
        #expect(token.audience.contains(AccessTokenForge.api))
        // application/at+jwt is the same type (RFC 9068 §4), and a string aud counts.
        var single = forge.claims()
        single["aud"] = AccessTokenForge.api
        #expect(try await verifier().verify(try boundRequest(single, header: ["typ": "application/AT+JWT"])).token != nil)
    }

    @Test("the Authorization header: none, two, another scheme, no token, not a token68, and a token in the query or body are each refused")
    func authorizationHeader() async throws {
        let token = try forge.token(forge.claims())
        let verifier = verifier()
        let cases: [(ProtectedResourceRequest, AccessTokenFailure.Reason, Int)] = [
            (.init(method: "GET", url: AccessTokenForge.url, authorization: []), .missingToken, 401),
            (.init(method: "GET", url: AccessTokenForge.url, authorization: ["DPoP \(token)", "DPoP \(token)"]), .repeatedAuthorization, 400),
            (.init(method: "GET", url: AccessTokenForge.url, authorization: ["Basic dXNlcjpwYXNz"]), .unsupportedScheme, 401),
            (.init(method: "GET", url: AccessTokenForge.url, authorization: ["DPoP"]), .malformedAuthorization, 400),
            (.init(method: "GET", url: AccessTokenForge.url, authorization: ["DPoP a,b"]), .malformedAuthorization, 400),
            (.init(method: "GET", url: AccessTokenForge.url, authorization: ["Bearer x=y"]), .malformedAuthorization, 400),
            (.init(method: "GET", url: AccessTokenForge.url, authorization: [], hasAccessTokenParameter: true), .tokenInParameter, 400),
            (
                .init(method: "GET", url: AccessTokenForge.url, authorization: ["DPoP \(token)"], hasAccessTokenParameter: true), .tokenInParameter,
                400
            ),
            (.init(method: "GET", url: AccessTokenForge.url, authorization: ["DPoP " + String(repeating: "a", count: 9_000)]), .malformedToken, 401),
        ]
        for (request, expected, status) in cases {
            let failure = try #require(try await verifier.verify(request).failure)
            #expect(failure.reason == expected, "\(request.authorization.first?.prefix(20) ?? "none")")
            #expect(failure.status == status, "\(expected)")
        }
        // The scheme is case-insensitive (RFC 7235 §2.1).
        let lower = try boundRequest()
        #expect(
            try await verifier.verify(
                .init(method: "GET", url: lower.url, authorization: lower.authorization.map { "dpop" + $0.dropFirst(4) }, dpop: lower.dpop)
            ).token != nil)
    }

    @Test(
        "an ID token, alg none, HS256 keyed with anything, an unknown kid, a forged signature, repeated claims and crit are refused before any claim counts"
    )
    func hostileTokens() async throws {
        let verifier = verifier()
        let claims = forge.claims()
        let signingInput = try AccessTokenForge.encode(["alg": "HS256", "kid": "key-1", "typ": "at+jwt"]) + "." + AccessTokenForge.encode(claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: SymmetricKey(data: Data("secret".utf8)))
        let hs256 = signingInput + "." + Data(mac).base64URLEncodedString()
        let none = try AccessTokenForge.encode(["alg": "none", "typ": "at+jwt"]) + "." + AccessTokenForge.encode(claims) + "."
        let repeated =
            try AccessTokenForge.encode(["alg": "ES256", "kid": "key-1", "typ": "at+jwt"]) + "."
            + Data(#"{"sub":"user-1","sub":"admin"}"#.utf8).base64URLEncodedString() + ".c2ln"
        let cases: [(String, AccessTokenFailure.Reason)] = [
            (try forge.token(claims, header: ["typ": "JWT"]), .wrongType),
            (try forge.token(claims, header: ["typ": NSNull()]), .wrongType),
            (try forge.token(claims, header: ["typ": "dpop+jwt"]), .wrongType),
            (none, .malformedToken),
            (hs256, .unacceptableAlgorithm),
            (try forge.token(claims, header: ["kid": "key-2"]), .unknownKey),
            (try forge.token(claims, key: P256.Signing.PrivateKey()), .badSignature),
            (try forge.token(claims, header: ["crit": ["exp"]]), .malformedToken),
            (repeated, .repeatedMember),
            ("not.a.jwt", .malformedToken),
        ]
        for (token, expected) in cases {
            let result = try await verifier.verify(request(token, proof: try forge.proof(accessToken: token)))
            #expect(reason(result) == expected, "\(expected)")
            #expect(result.failure?.error.error == .invalidToken, "\(expected)")
            #expect(result.failure?.status == 401)
        }
    }

    @Test("iss, aud, exp (with skew), nbf, iat, sub and client_id are each checked")
    func claimChecks() async throws {
        let verifier = verifier()
        func variant(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
            var claims = forge.claims()
            change(&claims)
            return claims
        }
        let cases: [([String: Any], AccessTokenFailure.Reason)] = [
            (variant { $0["iss"] = "https://evil.example.com" }, .wrongIssuer),
            (variant { $0["aud"] = ["https://other-api.example.com", FakeProvider.issuer] }, .wrongAudience),
            (variant { $0["aud"] = nil }, .wrongAudience),
            (variant { $0["exp"] = clock.seconds - 61 }, .expired),
            (variant { $0["exp"] = nil }, .missingClaim),
            (variant { $0["nbf"] = clock.seconds + 120 }, .notYetValid),
            (variant { $0["iat"] = clock.seconds + 120 }, .notYetValid),
            (variant { $0["iat"] = nil }, .missingClaim),
            (variant { $0["sub"] = nil }, .missingClaim),
            (variant { $0["client_id"] = nil }, .missingClaim),
            (variant { $0["client_id"] = 7 }, .missingClaim),
        ]
        for (claims, expected) in cases {
            #expect(reason(try await verifier.verify(try boundRequest(claims))) == expected, "\(expected)")
        }
        // Within the skew both ways is still fine.
        #expect(try await verifier.verify(try boundRequest(variant { $0["exp"] = clock.seconds - 59 })).token != nil)
        #expect(try await verifier.verify(try boundRequest(variant { $0["iat"] = clock.seconds + 59 })).token != nil)
    }

    @Test("every required scope must be granted, else 403 insufficient_scope naming the scopes in the challenge")
    func scopes() async throws {
        let verifier = verifier()
        #expect(
            try await verifier.verify(try boundRequest(forge.claims(scope: "accounts payments")), requiredScopes: ["accounts", "payments"]).token
                != nil)
        let partial = try #require(
            try await verifier.verify(try boundRequest(forge.claims(scope: "accounts")), requiredScopes: ["accounts", "payments"]).failure)
        #expect(partial.reason == .insufficientScope)
        #expect(partial.status == 403)
        #expect(partial.error.error == .insufficientScope)
        #expect(partial.challenges(configuration: verifier.configuration).first?.contains(#"scope="accounts payments""#) == true)
        // A scope is a whole word: "accountsX" is not "accounts".
        #expect(
            reason(try await verifier.verify(try boundRequest(forge.claims(scope: "accountsX")), requiredScopes: ["accounts"])) == .insufficientScope)
        var noScope = forge.claims()
        noScope["scope"] = nil
        #expect(reason(try await verifier.verify(try boundRequest(noScope), requiredScopes: ["accounts"])) == .insufficientScope)
    }

    @Test("a minimum acr refuses weaker logins with insufficient_user_authentication (RFC 9470) and accepts as strong or stronger")
    func minimumACR() async throws {
        let verifier = verifier(minimumACR: AssuranceLevel.twoFactors)
        let weak = try #require(try await verifier.verify(try boundRequest(forge.claims(acr: AssuranceLevel.oneFactor))).failure)
        #expect(weak.reason == .insufficientACR)
        #expect(weak.error.error.rawValue == "insufficient_user_authentication")
        #expect(weak.status == 401)
        #expect(weak.challenges(configuration: verifier.configuration)[0].contains(#"acr_values="urn:signet:loa:2""#))
        #expect(reason(try await verifier.verify(try boundRequest(forge.claims(acr: nil)))) == .insufficientACR)
        #expect(try await verifier.verify(try boundRequest(forge.claims(acr: AssuranceLevel.twoFactors))).token != nil)
    }

    @Test("a bound token needs the DPoP scheme and a valid proof of its key; every bad proof is invalid_dpop_proof")
    func binding() async throws {
        let verifier = verifier()
        let token = try forge.token(forge.claims())
        var privateJWK = AccessTokenForge.publicJWK(forge.dpopKey)
        privateJWK["d"] = forge.dpopKey.rawRepresentation.base64URLEncodedString()
        let bearer = try #require(try await verifier.verify(request(token, scheme: "Bearer", proof: try forge.proof(accessToken: token))).failure)
        #expect(bearer.reason == .boundTokenAsBearer)
        #expect(bearer.error.error == .invalidToken)
        #expect(bearer.challenges(configuration: verifier.configuration).first?.hasPrefix("DPoP ") == true)
        let cases: [(String?, AccessTokenFailure.Reason)] = [
            (nil, .missingProof),
            (try forge.proof("POST", accessToken: token), .invalidProof),
            (try forge.proof("GET", AccessTokenForge.api + "/payments", accessToken: token), .invalidProof),
            (try forge.proof("GET", "https://evil.example.com/accounts", accessToken: token), .invalidProof),
            (try forge.proof(accessToken: nil), .invalidProof),
            (try forge.proof(accessToken: "another token"), .invalidProof),
            (try forge.proof(accessToken: token, iat: clock.now.addingTimeInterval(-200)), .invalidProof),
            (try forge.proof(accessToken: token, iat: clock.now.addingTimeInterval(200)), .invalidProof),
            (try forge.proof(accessToken: token, header: ["jwk": privateJWK]), .invalidProof),
            (try forge.proof(accessToken: token, header: ["typ": "JWT"]), .invalidProof),
            (try forge.proof(accessToken: token, key: P256.Signing.PrivateKey()), .proofKeyMismatch),
        ]
        for (proof, expected) in cases {
            let failure = try #require(try await verifier.verify(request(token, proof: proof)).failure, "\(expected)")
            #expect(failure.reason == expected)
            #expect(failure.error.error == .invalidDPoPProof)
            #expect(failure.status == 401)
        }
        // Two proofs at once are refused too.
        let two = ProtectedResourceRequest(
            method: "GET", url: AccessTokenForge.url, authorization: ["DPoP \(token)"],
            dpop: [try forge.proof(accessToken: token), try forge.proof(accessToken: token)])
        #expect(reason(try await verifier.verify(two)) == .invalidProof)
        // htu is this API's public URL: scheme and host compare case-insensitively (RFC 9449 §4.3),
        // and it has no query or fragment (§4.2).
        #expect(
            try await verifier.verify(request(token, proof: try forge.proof("GET", "HTTPS://API.example.com/accounts", accessToken: token))).token
                != nil)
        for htu in ["HTTPS://API.example.com/accounts?x=1", "https://api.example.com/accounts#f", "https://api.example.com/accounts?"] {
            #expect(
                reason(try await verifier.verify(request(token, proof: try forge.proof("GET", htu, accessToken: token)))) == .invalidProof, "\(htu)")
        }
    }

    @Test("a proof is used once: the same jti again is replayed_dpop_proof, until its horizon has passed")
    func replay() async throws {
        let verifier = verifier()
        let token = try forge.token(forge.claims())
        let proof = try forge.proof(accessToken: token, jti: "once")
        #expect(try await verifier.verify(request(token, proof: proof)).token != nil)
        #expect(reason(try await verifier.verify(request(token, proof: proof))) == .replayedProof)
        // A failed request does not spend its proof: the jti is recorded only when everything else passed.
        let unspent = try forge.proof(accessToken: token, jti: "unspent")
        #expect(reason(try await verifier.verify(request(token, proof: unspent), requiredScopes: ["admin"])) == .insufficientScope)
        #expect(try await verifier.verify(request(token, proof: unspent)).token != nil)

        // A full cache refuses the proof it cannot record, with 503 and no challenge.
        let small = self.verifier(replayCache: MemoryDPoPReplayCache(capacity: 1))
        #expect(try await small.verify(request(token, proof: try forge.proof(accessToken: token))).token != nil)
        let full = try #require(try await small.verify(request(token, proof: try forge.proof(accessToken: token))).failure)
        #expect(full.reason == .replayCacheFull)
        #expect(full.status == 503)
        #expect(full.error.error == .temporarilyUnavailable)
        #expect(full.challenges(configuration: small.configuration).isEmpty)
    }

    @Test("the DPoP scheme with an unbound token is refused; a bearer token passes only when sender constraint is not required")
    func bearerTokens() async throws {
        let unbound = try forge.token(forge.claims(bound: false))
        let asDPoP = try #require(
            try await verifier(requireSenderConstrained: false).verify(request(unbound, proof: try forge.proof(accessToken: unbound))).failure)
        #expect(asDPoP.reason == .unboundTokenAsDPoP)
        #expect(asDPoP.error.error == .invalidToken)

        let lenient = verifier(requireSenderConstrained: false)
        let accepted = try #require(try await lenient.verify(request(unbound, scheme: "Bearer")).token)
        #expect(!accepted.isSenderConstrained)

        let strict = verifier()
        let refused = try #require(try await strict.verify(request(unbound, scheme: "Bearer")).failure)
        #expect(refused.reason == .senderConstraintRequired)
        #expect(refused.status == 401)
        // The strict API offers only DPoP, and says so with the error.
        let challenges = refused.challenges(configuration: strict.configuration)
        #expect(challenges.count == 1)
        #expect(challenges[0].hasPrefix(#"DPoP algs="ES256 ES384 EdDSA PS256 RS256", error="invalid_token""#))
    }

    @Test("a certificate-bound token (RFC 8705 cnf.x5t#S256) passes only with the certificate it names, as a sender-constrained bearer token")
    func certificateBound() async throws {
        var claims = forge.claims(bound: false)
        claims["cnf"] = ["x5t#S256": "bound-thumbprint"]
        let token = try forge.token(claims)
        var withIt = request(token, scheme: "Bearer")
        withIt.clientCertificateThumbprint = "bound-thumbprint"
        let accepted = try #require(try await verifier().verify(withIt).token, "sender-constrained, so the strict verifier takes it")
        #expect(accepted.isSenderConstrained)
        #expect(accepted.certificateThumbprint == "bound-thumbprint")
        let without = try #require(try await verifier().verify(request(token, scheme: "Bearer")).failure)
        #expect(without.reason == .certificateRequired)
        #expect(without.status == 401)
        #expect(without.error.error == .invalidToken)
        var another = request(token, scheme: "Bearer")
        another.clientCertificateThumbprint = "another-thumbprint"
        #expect(reason(try await verifier(requireSenderConstrained: false).verify(another)) == .certificateMismatch)
    }

    @Test("challenges: DPoP with algs always, Bearer only when accepted, the error in the challenge of the scheme used, nothing unquoted")
    func challenges() async throws {
        let lenient = verifier(requireSenderConstrained: false)
        let missing = try #require(try await lenient.verify(.init(method: "GET", url: AccessTokenForge.url, authorization: [])).failure)
        #expect(missing.challenges(configuration: lenient.configuration) == [#"DPoP algs="ES256 ES384 EdDSA PS256 RS256""#, "Bearer"])
        #expect(missing.error.error == .invalidRequest)

        var expired = forge.claims(bound: false)
        expired["exp"] = clock.seconds - 3_600
        let token = try forge.token(expired)
        let bearer = try #require(try await lenient.verify(request(token, scheme: "Bearer")).failure)
        #expect(
            bearer.challenges(configuration: lenient.configuration) == [
                #"DPoP algs="ES256 ES384 EdDSA PS256 RS256""#, #"Bearer error="invalid_token", error_description="the access token has expired""#,
            ])

        let hostile = AuthenticationChallenge(scheme: "DPoP", attributes: [("error_description", "a \"quoted\" \\ value\r\n")])
        #expect(hostile.headerValue == #"DPoP error_description="a 'quoted' / value  ""#)
    }

    @Test("the verifier throws only when the issuer's keys cannot be had: discovery naming another issuer")
    func unreachableKeys() async throws {
        await provider.setDiscoveryIssuer("https://evil.example.com")
        await #expect(throws: SignetError(.issuerMismatch, "")) { _ = try await verifier().verify(try boundRequest()) }
    }
}

@Suite("DPoP replay cache")
struct DPoPReplayCacheTests {
    let start = Date(timeIntervalSince1970: 1_750_000_000)

    @Test("first use, then replayed; the same jti under another key is another proof; an expired entry may be used again")
    func firstUse() async {
        let cache = MemoryDPoPReplayCache()
        let expiry = start.addingTimeInterval(180)
        #expect(await cache.recordFirstUse(jti: "a", jkt: "k1", expiry: expiry, now: start) == .firstUse)
        #expect(await cache.recordFirstUse(jti: "a", jkt: "k1", expiry: expiry, now: start.addingTimeInterval(179)) == .replayed)
        #expect(await cache.recordFirstUse(jti: "a", jkt: "k2", expiry: expiry, now: start) == .firstUse)
        #expect(await cache.recordFirstUse(jti: "a", jkt: "k1", expiry: expiry.addingTimeInterval(180), now: expiry) == .firstUse)
    }

    @Test("bounded: when full of live entries a new proof is refused (not a live one forgotten); once entries expire they are swept")
    func bounded() async {
        let cache = MemoryDPoPReplayCache(capacity: 3, perKeyLimit: 3)
        let expiry = start.addingTimeInterval(180)
        for jti in ["a", "b", "c"] { #expect(await cache.recordFirstUse(jti: jti, jkt: "k", expiry: expiry, now: start) == .firstUse) }
        #expect(await cache.recordFirstUse(jti: "d", jkt: "k", expiry: expiry, now: start.addingTimeInterval(1)) == .full)
        // The live ones are all still remembered.
        for jti in ["a", "b", "c"] {
            #expect(await cache.recordFirstUse(jti: jti, jkt: "k", expiry: expiry, now: start.addingTimeInterval(2)) == .replayed)
        }
        #expect(await cache.count == 3)
        let later = expiry.addingTimeInterval(1)
        #expect(await cache.recordFirstUse(jti: "d", jkt: "k", expiry: later.addingTimeInterval(180), now: later) == .firstUse)
        #expect(await cache.count == 1)
    }

    @Test("one key flooding valid proofs fills its own share, not the cache: others are still recorded and nothing live is forgotten")
    func fairShare() async {
        let cache = MemoryDPoPReplayCache(capacity: 8, perKeyLimit: 2)
        #expect(cache.perKeyLimit == 2)
        let expiry = start.addingTimeInterval(180)
        for jti in ["1", "2"] { #expect(await cache.recordFirstUse(jti: jti, jkt: "flooder", expiry: expiry, now: start) == .firstUse) }
        for n in 3...20 { #expect(await cache.recordFirstUse(jti: "\(n)", jkt: "flooder", expiry: expiry, now: start) == .full) }
        for user in ["alice", "bob", "carol"] {
            #expect(await cache.recordFirstUse(jti: "a", jkt: user, expiry: expiry, now: start) == .firstUse)
            #expect(await cache.recordFirstUse(jti: "a", jkt: user, expiry: expiry, now: start) == .replayed)
        }
        #expect(await cache.recordFirstUse(jti: "1", jkt: "flooder", expiry: expiry, now: start) == .replayed)
        // Once the flooder's entries expire, its share is free again.
        let later = expiry.addingTimeInterval(1)
        #expect(await cache.recordFirstUse(jti: "21", jkt: "flooder", expiry: later.addingTimeInterval(180), now: later) == .firstUse)
        #expect(MemoryDPoPReplayCache().perKeyLimit == 25_000)
    }

    @Test("1 000 concurrent uses of one jti: exactly one first use")
    func concurrent() async {
        let cache = MemoryDPoPReplayCache()
        let outcomes = await withTaskGroup(of: DPoPReplayOutcome.self) { group in
            for _ in 0..<1_000 { group.addTask { await cache.recordFirstUse(jti: "x", jkt: "k", expiry: start.addingTimeInterval(60), now: start) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .firstUse }.count == 1)
        #expect(outcomes.filter { $0 == .replayed }.count == 999)
    }
}
