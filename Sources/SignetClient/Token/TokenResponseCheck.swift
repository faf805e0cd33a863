// What the SDK checks in every token response before it keeps the tokens.
import Foundation
import SignetCore

/// The checks of a token response: its `token_type`, and its ID token's claims with the same
/// code the relying-party kit uses (``SignetCore/IDTokenClaims/failures(against:now:)``,
/// ``SignetCore/TokenHash``).
///
/// The ID token's signature is not checked: it came straight from the token endpoint over TLS,
/// so the TLS server validation stands in for it (OIDC Core §3.1.3.7 item 6), and a mobile app
/// then needs no JWKS fetch. Its shape, `alg`, `iss`, `aud`, `azp`, `exp`, `iat`, `nonce`,
/// `acr` and `at_hash` are checked all the same: they say whether the token is *for this*
/// sign-in, which TLS cannot.
struct TokenResponseCheck: Sendable {
    let issuer: String
    let clientID: String
    /// Whether a DPoP proof was sent, so `token_type` must be `DPoP` (RFC 9449 §5).
    let usedDPoP: Bool
    let leeway: Int = 60

    /// What the tokens of one response must match.
    struct Expectation: Sendable {
        /// The nonce of the authorization request (code exchange only).
        var nonce: String?
        /// The acr_values asked for, space-separated.
        var acrValues: String?
        /// An ID token is required (a code exchange with scope `openid`).
        var requiresIDToken: Bool
        /// The claims of the previous ID token, on refresh: `iss` and `sub` must stay the same (OIDC Core §12.2).
        var previous: IDTokenClaims?
    }

    /// The tokens, checked; throws ``SignetClientError`` naming what failed.
    func check(_ tokens: TokenResponse, _ expectation: Expectation, now: Date) throws -> AuthTokens {
        // RFC 6749 §7.1: never use a token of a type not asked for; RFC 9449 §5: DPoP when proved.
        let expectedType = usedDPoP ? "DPoP" : "Bearer"
        guard tokens.tokenType.caseInsensitiveCompare(expectedType) == .orderedSame else {
            throw SignetClientError(
                .unexpectedTokenType, isRetryable: false, reason: "token_type is \(tokens.tokenType.prefix(32)), expected \(expectedType)")
        }
        var claims: IDTokenClaims?
        if let idToken = tokens.idToken {
            switch validate(idToken, accessToken: tokens.accessToken, expectation, now: now) {
            case .valid(let valid): claims = valid
            case .invalid(let failures):
                // acr alone keeps its own, older code.
                if failures == [.acrNotSatisfied] { throw SignetClientError(.acrNotSatisfied, isRetryable: false, idTokenFailures: failures) }
                throw SignetClientError(.invalidIDToken, isRetryable: false, idTokenFailures: failures)
            }
            if let previous = expectation.previous, let claims, claims.sub != previous.sub || claims.iss != previous.iss {
                throw SignetClientError(
                    .invalidIDToken, isRetryable: false, reason: "the refreshed ID token names another iss or sub (OIDC Core section 12.2)")
            }
        } else if expectation.requiresIDToken {
            throw SignetClientError(.invalidIDToken, isRetryable: false, idTokenFailures: [.malformed], reason: "the token response has no id_token")
        }
        return AuthTokens(
            tokens: tokens, accessTokenExpiresAt: now.addingTimeInterval(TimeInterval(tokens.expiresIn ?? 300)),
            idTokenClaims: claims ?? expectation.previous)
    }

    /// The claim checks of OIDC Core §3.1.3.7 (all but the signature, see above) and at_hash (§3.1.3.8).
    func validate(_ idToken: String, accessToken: String, _ expectation: Expectation, now: Date) -> IDTokenValidationResult {
        let jwt: CompactJWT
        switch CompactJWT.parse(idToken) {
        case .success(let parsed): jwt = parsed
        case .failure(.repeatedHeaderMember), .failure(.repeatedClaim): return .invalid([.repeatedMember])
        case .failure: return .invalid([.malformed])
        }
        // No `none` and no MAC: only what a provider signs ID tokens with.
        guard JOSEHeader.acceptedAlgorithms.contains(jwt.header.alg) else { return .invalid([.unacceptableAlgorithm]) }
        guard let claims = try? JSONDecoder().decode(IDTokenClaims.self, from: jwt.claims) else { return .invalid([.malformed]) }
        let expected = IDTokenExpectation(
            issuer: issuer, clientID: clientID, nonce: expectation.nonce, leeway: leeway,
            acrValues: (expectation.acrValues ?? "").split(separator: " ").map(String.init))
        var failures = claims.failures(against: expected, now: Int(now.timeIntervalSince1970.rounded(.down)))
        if let atHash = claims.atHash, !ConstantTime.equals(atHash, TokenHash.half(of: accessToken, algorithm: jwt.header.alg)) {
            failures.append(.atHashMismatch)
        }
        return failures.isEmpty ? .valid(claims) : .invalid(failures)
    }
}
