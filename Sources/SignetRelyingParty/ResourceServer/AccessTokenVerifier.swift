// Verifying the access tokens sent to an API: RFC 9068 JWTs, bearer or DPoP-bound (RFC 9449).
import Foundation
import JWTKit
import SignetCore
import SignetJOSE

/// The outcome of verifying a request to an API: a value, never an error.
public enum AccessTokenVerification: Sendable, Equatable {
    /// The token passed every check; the request may be served.
    case valid(VerifiedAccessToken)
    /// The request must be refused with this failure's status, error and challenges.
    case invalid(AccessTokenFailure)

    /// The verified token, or `nil`.
    public var token: VerifiedAccessToken? {
        if case .valid(let token) = self { return token }
        return nil
    }

    /// The failure, or `nil`.
    public var failure: AccessTokenFailure? {
        if case .invalid(let failure) = self { return failure }
        return nil
    }
}

/// Verifies the access token (and its DPoP proof) of each request to an API.
///
/// For resource servers that accept the provider's JWT access tokens (RFC 9068) offline: the
/// signing keys come from the issuer's discovery document and ``JWKSCache`` (bounded refetch
/// on an unknown `kid`). Revocation is seen when the token expires; the provider's tokens live
/// 10 minutes by default. The checks, in order, are listed at ``verify(_:requiredScopes:)``.
///
/// A value: copies share the key set and the replay cache, which are actors.
public struct AccessTokenVerifier: Sendable {
    /// The verifier's settings.
    public let configuration: AccessTokenVerifierConfiguration
    /// The issuer's signing keys.
    public let keySet: JWKSCache
    /// Where the `jti` of accepted DPoP proofs is kept.
    public let replayCache: any DPoPReplayCache
    let now: @Sendable () -> Date
    /// The DPoP keys already made, for the next proof of the same key.
    let proofKeys = JWKSignature()

    /// A verifier whose keys are read from the issuer's discovery document (`jwks_uri`) when first needed.
    ///
    /// - Parameters:
    ///   - configuration: the issuer, this API's audience and the strictness.
    ///   - transport: how discovery and the JWKS are fetched; default ``AsyncHTTPClientTransport``.
    ///   - replayCache: where DPoP proof `jti`s are kept; default a bounded ``MemoryDPoPReplayCache``.
    ///   - now: the clock for `exp`, `nbf`, `iat` and proof ages.
    public init(
        configuration: AccessTokenVerifierConfiguration,
        transport: any HTTPTransport = AsyncHTTPClientTransport(),
        replayCache: any DPoPReplayCache = MemoryDPoPReplayCache(),
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        let keySet = JWKSCache.discovered(
            issuer: configuration.issuer, discovery: DiscoveryCache(), transport: transport,
            minimumRefetchInterval: configuration.keySetRefetchInterval,
            maximumAge: configuration.keySetMaximumAge, now: now)
        self.init(configuration: configuration, keySet: keySet, replayCache: replayCache, now: now)
    }

    /// A verifier that uses `keySet`, e.g. a ``RelyingParty``'s ``RelyingParty/keySet`` when the
    /// same backend is also a client of the issuer.
    public init(
        configuration: AccessTokenVerifierConfiguration,
        keySet: JWKSCache,
        replayCache: any DPoPReplayCache = MemoryDPoPReplayCache(),
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.configuration = configuration
        self.keySet = keySet
        self.replayCache = replayCache
        self.now = now
    }

    /// Verifies `request`'s access token for a resource that needs `requiredScopes` (all of them).
    ///
    /// In order, each failure a value with its RFC's error:
    /// 1. the credentials — no `access_token` parameter (RFC 6750 §2.2–2.3), exactly one `Authorization`
    ///    header, scheme `DPoP` or `Bearer`, a token68 (RFC 6750 §2.1, RFC 9449 §7.1, RFC 7235 §2.1);
    /// 2. the token — ``SignetCore/CompactJWT/parse(_:)`` (repeated members refused), header `typ`
    ///    `at+jwt` (RFC 9068 §4, so an ID token never passes), `alg` accepted (never `none` or HMAC),
    ///    `kid` in the issuer's JWKS, signature;
    /// 3. the claims (RFC 9068 §4) — `iss`, `aud` containing this API, `exp`, `nbf`, `iat` (with the
    ///    configured skew), `sub` and `client_id` present, every required scope (else
    ///    `insufficient_scope`, RFC 6750 §3.1), the minimum `acr` (else RFC 9470's
    ///    `insufficient_user_authentication`);
    /// 4. the binding (RFC 9449 §7) — a token with `cnf.jkt` only with the DPoP scheme and a proof
    ///    (RFC 9449 §4.3: `htm`, `htu` = the request's public URL, `iat`, `ath`) made with that key,
    ///    whose `jti` is new; the DPoP scheme only with a bound token; a bearer token only when
    ///    sender-constrained tokens are not required (FAPI 2.0 Security Profile §5.3.4).
    ///
    /// - Throws: only when the issuer's metadata or keys cannot be fetched at all, or the replay
    ///   cache cannot be reached: the request was not judged (answer 503, not 401).
    public func verify(_ request: ProtectedResourceRequest, requiredScopes: some Collection<String> = [String]()) async throws
        -> AccessTokenVerification
    {
        guard !request.hasAccessTokenParameter else {
            return .invalid(.init(.tokenInParameter, "send the access token in the Authorization header only, never in the URI or the body"))
        }
        let (token, scheme): (String, AuthorizationCredentials.Scheme)
        switch AuthorizationCredentials.read(request.authorization, maximumSize: configuration.maximumTokenSize) {
        case .none:
            return .invalid(.init(.missingToken, "an access token is required (Authorization: DPoP)"))
        case .refused(let problem):
            return .invalid(AccessTokenFailure(problem))
        case .token(let presented, let presentedScheme):
            (token, scheme) = (presented, presentedScheme)
        }

        let claims: ReceivedAccessTokenClaims
        switch try await verifiedClaims(of: token) {
        case .failure(let failure): return .invalid(scheme == .dpop ? failure.aboutDPoP() : failure)
        case .success(let verified): claims = verified
        }
        let bound = claims.cnf?.jkt != nil
        let concernsDPoP = scheme == .dpop || bound
        func refuse(_ reason: AccessTokenFailure.Reason, _ description: String, scopes: [String] = []) -> AccessTokenVerification {
            .invalid(AccessTokenFailure(reason, description, requiredScopes: scopes, concernsDPoP: concernsDPoP))
        }

        let seconds = Int(now().timeIntervalSince1970.rounded(.down))
        let skew = configuration.clockSkew
        guard let issuer = claims.iss, issuer == configuration.issuer else { return refuse(.wrongIssuer, "the access token is from another issuer") }
        guard let audience = claims.aud, audience.contains(configuration.audience) else {
            return refuse(.wrongAudience, "the access token is not for this resource")
        }
        guard let exp = claims.exp else { return refuse(.missingClaim, "the access token has no exp") }
        guard exp + skew > seconds else { return refuse(.expired, "the access token has expired") }
        guard let iat = claims.iat else { return refuse(.missingClaim, "the access token has no iat") }
        guard iat - skew <= seconds, (claims.nbf ?? iat) - skew <= seconds else { return refuse(.notYetValid, "the access token is not valid yet") }
        guard let subject = claims.sub, !subject.isEmpty else { return refuse(.missingClaim, "the access token has no sub") }
        guard let clientID = claims.clientID, !clientID.isEmpty else { return refuse(.missingClaim, "the access token has no client_id") }
        let scopes = (claims.scope ?? "").split(separator: " ").map(String.init)
        let needed = Array(requiredScopes)
        guard Set(needed).isSubset(of: scopes) else {
            return refuse(.insufficientScope, "the access token lacks a required scope", scopes: needed)
        }
        if let minimum = configuration.minimumACR, !AssuranceLevel.satisfies(acr: claims.acr, requested: [minimum]) {
            return refuse(.insufficientACR, "the login behind the access token is weaker than this resource requires")
        }

        // RFC 8705 §3 and RFC 9449 §7, as the provider's own resources judge them (TokenBinding).
        let binding = TokenBinding(dpopThumbprint: claims.cnf?.jkt, certificateThumbprint: claims.cnf?.x5tS256)
        switch binding.refusal(scheme: scheme, certificate: request.clientCertificateThumbprint) {
        case .certificateRequired?:
            return refuse(.certificateRequired, "the access token is bound to a client certificate: present it over mutual TLS")
        case .certificateMismatch?: return refuse(.certificateMismatch, "the access token is bound to another client certificate")
        case .boundTokenAsBearer?:
            return .invalid(
                AccessTokenFailure(
                    .boundTokenAsBearer, "the access token is DPoP-bound: send it with the DPoP scheme and a proof", concernsDPoP: true))
        case .unboundTokenAsDPoP?:
            return .invalid(
                AccessTokenFailure(.unboundTokenAsDPoP, "the access token is not DPoP-bound: the DPoP scheme needs a bound token", concernsDPoP: true)
            )
        case nil: break
        }
        // A certificate-bound token is sender-constrained already.
        if binding.dpopThumbprint == nil, binding.certificateThumbprint == nil, configuration.requireSenderConstrained {
            return .invalid(AccessTokenFailure(.senderConstraintRequired, "this resource accepts only DPoP-bound access tokens", concernsDPoP: true))
        }
        if binding.needsProof, let failure = try await proofFailure(of: token, binding: binding, request: request) {
            return .invalid(failure)
        }
        return .valid(
            VerifiedAccessToken(
                issuer: issuer, subject: subject, clientID: clientID, audience: audience, scopes: scopes,
                expiresAt: Date(timeIntervalSince1970: TimeInterval(exp)), issuedAt: Date(timeIntervalSince1970: TimeInterval(iat)),
                tokenID: claims.jti, acr: claims.acr, amr: claims.amr,
                authTime: claims.authTime.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                dpopThumbprint: claims.cnf?.jkt, certificateThumbprint: claims.cnf?.x5tS256))
    }

    /// The token's claims once its form, type, algorithm, key and signature pass (RFC 9068 §4 items 1–4).
    func verifiedClaims(of token: String) async throws -> Result<ReceivedAccessTokenClaims, AccessTokenFailure> {
        let jwt: CompactJWT
        switch CompactJWT.parse(token) {
        case .success(let parsed): jwt = parsed
        case .failure(let refusal):
            switch refusal {
            case .repeatedHeaderMember, .repeatedClaim: return .failure(.init(.repeatedMember, "the access token is refused: \(refusal)"))
            default: return .failure(.init(.malformedToken, "the access token is refused: \(refusal)"))
            }
        }
        // RFC 9068 §4: typ must be at+jwt (media types compare case-insensitively, RFC 2045 §5.1).
        guard let typ = jwt.header.typ?.lowercased(), typ == "at+jwt" || typ == "application/at+jwt" else {
            return .failure(.init(.wrongType, "the token is not an access token (typ must be at+jwt)"))
        }
        let alg = jwt.header.alg
        guard configuration.acceptedAlgorithms.contains(alg) else {
            return .failure(.init(.unacceptableAlgorithm, "the access token's alg is not accepted"))
        }
        guard let key = try await keySet.key(for: jwt.header.kid) else {
            return .failure(.init(.unknownKey, "the access token is signed with an unknown key"))
        }
        guard let verifier = key.verifiers[alg] else { return .failure(.init(.badSignature, "the access token's key does not fit its alg")) }
        do {
            _ = try await verifier.verify(token, as: AnyJWTClaims.self)
        } catch {
            return .failure(.init(.badSignature, "the access token's signature does not verify"))
        }
        guard let claims = try? JSONDecoder().decode(ReceivedAccessTokenClaims.self, from: jwt.claims) else {
            return .failure(.init(.missingClaim, "the access token has a claim of the wrong type"))
        }
        return .success(claims)
    }

    /// Why the proof of a DPoP-bound token fails, or `nil` when it holds — RFC 9449 §7.1, FAPI 2.0 Security Profile §5.3.4.
    ///
    /// The proof's `jti` is recorded last, so only a request that passes everything spends its proof.
    func proofFailure(of token: String, binding: TokenBinding, request: ProtectedResourceRequest) async throws -> AccessTokenFailure? {
        func refuse(_ reason: AccessTokenFailure.Reason, _ description: String) -> AccessTokenFailure {
            AccessTokenFailure(reason, description, concernsDPoP: true)
        }
        let check = DPoPProofCheck(
            lifetime: configuration.dpopProofLifetime, skew: TimeInterval(configuration.clockSkew), algorithms: configuration.acceptedAlgorithms,
            keys: proofKeys)
        let now = now()
        let proof: CheckedDPoPProof
        do {
            guard let checked = try await check.check(request.dpop, method: request.method, url: request.url, accessToken: token, now: now) else {
                return refuse(.missingProof, "a DPoP proof is required with a DPoP-bound access token")
            }
            proof = checked
        } catch let refusal as DPoPProofRefusal {
            return refuse(.invalidProof, refusal.description)
        }
        guard binding.proofMatches(proof.jkt) else {
            return refuse(.proofKeyMismatch, "the DPoP proof is made with another key than the access token is bound to")
        }
        switch try await replayCache.recordFirstUse(jti: proof.jti, jkt: proof.jkt, expiry: check.replayHorizon(of: proof), now: now) {
        case .firstUse: return nil
        case .replayed: return refuse(.replayedProof, "the DPoP proof was already used")
        case .full: return refuse(.replayCacheFull, "too many DPoP proofs are being checked right now; try again shortly")
        }
    }
}
