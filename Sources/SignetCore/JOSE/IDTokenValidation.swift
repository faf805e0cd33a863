// The claim checks of OIDC Core §3.1.3.7, as a value.

/// What a relying party expects of an ID token.
public struct IDTokenExpectation: Sendable, Equatable {
    public var issuer: String
    public var clientID: String
    /// The nonce sent in the authorization request, if any (OIDC Core §3.1.3.7 item 11).
    public var nonce: String?
    /// The max_age sent, in seconds, if any (item 13).
    public var maxAge: Int?
    /// How far clocks may disagree, in seconds.
    public var leeway: Int
    /// The acr_values sent, if any: the token's `acr` must satisfy them (``AssuranceLevel/satisfies(acr:requested:)``).
    public var acrValues: [String]

    public init(issuer: String, clientID: String, nonce: String?, maxAge: Int? = nil, leeway: Int = 60, acrValues: [String] = []) {
        self.issuer = issuer
        self.clientID = clientID
        self.nonce = nonce
        self.maxAge = maxAge
        self.leeway = leeway
        self.acrValues = acrValues
    }
}

/// Why an ID token was refused; each names the OIDC Core §3.1.3.7 check it fails.
public enum IDTokenFailure: String, Sendable, Equatable, CaseIterable {
    case malformed = "the token is not a compact JWS with a JSON claim set"
    case repeatedMember = "the header or the claims set repeats a member name (RFC 7515 §5.2, RFC 7519 §4)"
    case unacceptableAlgorithm = "alg is not an accepted asymmetric algorithm"
    case unknownKey = "kid names no key in the issuer's JWKS"
    case badSignature = "the signature does not verify"
    case wrongIssuer = "iss is not the expected issuer"
    case wrongAudience = "aud does not contain the client_id"
    case untrustedAudience = "aud contains audiences other than the client and azp is not the client"
    case expired = "exp is in the past"
    case issuedInFuture = "iat is in the future"
    case nonceMismatch = "nonce does not match the one sent"
    case authTooOld = "auth_time is older than max_age allows"
    case missingAuthTime = "auth_time is missing although max_age was sent"
    case atHashMismatch = "at_hash does not match the access token (OIDC Core §3.1.3.8)"
    case acrNotSatisfied = "acr is weaker than the acr_values asked for (OIDC Core §3.1.2.1)"
}

/// The outcome of ID-token validation: the claims, or every reason it failed.
public enum IDTokenValidationResult: Sendable, Equatable {
    case valid(IDTokenClaims)
    case invalid([IDTokenFailure])

    /// The claims when valid.
    public var claims: IDTokenClaims? {
        if case .valid(let claims) = self { return claims }
        return nil
    }
}

extension IDTokenClaims {
    /// The claim checks of OIDC Core §3.1.3.7 items 2, 3, 4, 5, 9, 10, 11, 12 (acr) and 13. The signature is checked elsewhere.
    ///
    /// - Parameter now: the current time in seconds since 1970, passed in so tests can pin it.
    public func failures(against expected: IDTokenExpectation, now: Int) -> [IDTokenFailure] {
        var failures: [IDTokenFailure] = []
        if iss != expected.issuer { failures.append(.wrongIssuer) }
        if !aud.contains(expected.clientID) { failures.append(.wrongAudience) }
        if aud.count > 1, azp != expected.clientID { failures.append(.untrustedAudience) }
        // Compared without adding to the claims, so absurd values cannot overflow.
        if exp <= now - expected.leeway { failures.append(.expired) }
        if iat > now + expected.leeway { failures.append(.issuedInFuture) }
        if let sent = expected.nonce {
            if nonce.map({ !ConstantTime.equals($0, sent) }) ?? true { failures.append(.nonceMismatch) }
        }
        if !AssuranceLevel.satisfies(acr: acr, requested: expected.acrValues) { failures.append(.acrNotSatisfied) }
        if let maxAge = expected.maxAge {
            if let authTime {
                if authTime < now - maxAge - expected.leeway { failures.append(.authTooOld) }
            } else {
                failures.append(.missingAuthTime)
            }
        }
        return failures
    }
}
