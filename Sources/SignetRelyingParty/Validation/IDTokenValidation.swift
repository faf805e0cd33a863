// Validating ID tokens (OIDC Core §3.1.3.7) and finishing the code flow.
import Crypto
import Foundation
import JWTKit
import SignetCore
import SignetJOSE

/// The result of a finished authorization code flow: the tokens and the validated ID token.
public struct CompletedAuthorization: Sendable, Equatable {
    /// The token response — RFC 6749 §5.1.
    public var tokens: TokenResponse
    /// The ID token's claims, validated — OIDC Core §3.1.3.7.
    public var idToken: IDTokenClaims

    /// A completed authorization with `tokens` whose ID token carried `idToken`.
    public init(tokens: TokenResponse, idToken: IDTokenClaims) {
        self.tokens = tokens
        self.idToken = idToken
    }
}

extension RelyingParty {
    /// Validates an ID token from this authorization — OIDC Core §3.1.3.7.
    ///
    /// The expectation is built from the configuration and `pending`: issuer, client_id,
    /// the nonce sent and the max_age sent. See ``validateIDToken(_:expectation:accessToken:)``.
    public func validateIDToken(_ token: String, pending: PendingAuthorization, accessToken: String? = nil) async throws -> IDTokenValidationResult {
        try await validateIDToken(token, expectation: expectation(for: pending), accessToken: accessToken)
    }

    /// Validates an ID token against `expectation` — OIDC Core §3.1.3.7 and §3.1.3.8.
    ///
    /// A token problem is a value, never an error: the result is `.valid(claims)` or
    /// `.invalid(reasons)`. In order: the token must pass ``SignetCore/CompactJWT/parse(_:)``
    /// (a header or claims set that repeats a member name is refused); the header's `alg` must be one of
    /// ``SignetCore/JOSEHeader/acceptedAlgorithms`` (refusing `none` and HMAC before any key is
    /// touched); its `kid` must name a key in the issuer's JWKS, refetched at most once when
    /// unknown (``JWKSCache``); the signature must verify with that key; then the claim checks
    /// of ``SignetCore/IDTokenClaims/failures(against:now:)`` run; and when `accessToken` is
    /// given and the token has `at_hash`, the hash must match (§3.1.3.8).
    ///
    /// An `at_hash` mismatch is reported as ``SignetCore/IDTokenFailure/atHashMismatch``: the
    /// access token is not the one this signed token vouches for.
    ///
    /// - Throws: only when the provider's metadata or keys cannot be fetched at all
    ///   (`transport_failure`, `malformed_message`, `issuer_mismatch`): the token was not judged.
    public func validateIDToken(_ token: String, expectation: IDTokenExpectation, accessToken: String? = nil) async throws -> IDTokenValidationResult
    {
        let header: JOSEHeader
        switch CompactJWT.parse(token) {
        case .success(let jwt): header = jwt.header
        case .failure(.repeatedHeaderMember), .failure(.repeatedClaim): return .invalid([.repeatedMember])
        case .failure: return .invalid([.malformed])
        }
        guard JOSEHeader.acceptedAlgorithms.contains(header.alg) else { return .invalid([.unacceptableAlgorithm]) }
        guard let key = try await keySet.key(for: header.kid) else { return .invalid([.unknownKey]) }
        guard let verifier = key.verifiers[header.alg] else { return .invalid([.badSignature]) }

        let claims: IDTokenClaims
        do {
            claims = try await verifier.verify(token, as: IDTokenClaims.self)
        } catch let error as JWTError where error.errorType == .malformedToken {
            return .invalid([.malformed])
        } catch {
            return .invalid([.badSignature])
        }

        var failures = claims.failures(against: expectation, now: nowSeconds)
        if let accessToken, let atHash = claims.atHash {
            let expected = Self.tokenHash(of: accessToken, algorithm: header.alg)
            if !ConstantTime.equals(expected, atHash) { failures.append(.atHashMismatch) }
        }
        return failures.isEmpty ? .valid(claims) : .invalid(failures)
    }

    /// Checks the redirect, redeems the code and validates the ID token, in one call.
    ///
    /// The whole of OIDC Core §3.1: ``handleRedirect(_:pending:)``, ``exchangeCode(_:pending:)``,
    /// then ``validateIDToken(_:pending:accessToken:)`` with the new access token. The token
    /// response must carry an ID token, since the request asked for `openid`.
    ///
    /// - Throws: what those throw, and `invalid_token` (with the reasons) when the ID token is
    ///   missing or invalid; the tokens are then not returned, so they cannot be used by mistake.
    public func completeAuthorization(redirect url: URL, pending: PendingAuthorization) async throws -> CompletedAuthorization {
        let code = try handleRedirect(url, pending: pending)
        let tokens = try await exchangeCode(code, pending: pending)
        guard let idToken = tokens.idToken else {
            throw SignetError(.invalidToken, "the token response has no id_token")
        }
        switch try await validateIDToken(idToken, pending: pending, accessToken: tokens.accessToken) {
        case .valid(let claims):
            return CompletedAuthorization(tokens: tokens, idToken: claims)
        case .invalid(let failures):
            throw SignetError(.invalidToken, "the ID token is invalid: " + failures.map(\.rawValue).joined(separator: "; "))
        }
    }

    /// What an ID token from the authorization `pending` must satisfy.
    public func expectation(for pending: PendingAuthorization) -> IDTokenExpectation {
        IDTokenExpectation(
            issuer: configuration.issuer, clientID: configuration.clientID, nonce: pending.nonce,
            maxAge: pending.maxAge, leeway: configuration.clockLeeway, acrValues: pending.acrValues ?? [])
    }

    /// at_hash of `token` for a JWS signed with `algorithm` — OIDC Core §3.1.3.6.
    ///
    /// The hash is the one of the signing algorithm: SHA-256 for ES256, RS256 and PS256,
    /// SHA-384 for ES384, SHA-512 for EdDSA over Ed25519.
    static func tokenHash(of token: String, algorithm: String) -> String {
        switch algorithm {
        case "ES384":
            return Data(Array(SHA384.hash(data: Data(token.utf8))).prefix(24)).base64URLEncodedString()
        case "EdDSA":
            return Data(Array(SHA512.hash(data: Data(token.utf8))).prefix(32)).base64URLEncodedString()
        default:
            return TokenHash.sha256Half(of: token)
        }
    }
}
