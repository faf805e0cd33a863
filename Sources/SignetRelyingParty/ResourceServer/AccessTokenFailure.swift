// Why a request to an API was refused, and how to say so on the wire (RFC 6750 §3.1, RFC 9449 §7.1).
import SignetCore

/// A refused request: a stable ``Reason`` for logs and metrics, and the OAuth error to answer with.
///
/// Equal on the reason only; the description is for people and the wire. Build the response
/// from ``status``, ``error`` (the JSON body `{error, error_description}`) and
/// ``challenges(configuration:)`` (the `WWW-Authenticate` fields).
public struct AccessTokenFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, bounded label of what failed, fit for metric labels and the audit log.
    public struct Reason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // The request (RFC 6750 §2, RFC 9449 §7.1).
        /// No `Authorization` header: the request carries no credentials (RFC 6750 §3.1).
        public static let missingToken = Reason(rawValue: "missing_token")
        /// A scheme other than `Bearer` and `DPoP`.
        public static let unsupportedScheme = Reason(rawValue: "unsupported_scheme")
        /// More than one `Authorization` header.
        public static let repeatedAuthorization = Reason(rawValue: "repeated_authorization")
        /// The header's token is missing or not a token68.
        public static let malformedAuthorization = Reason(rawValue: "malformed_authorization")
        /// An `access_token` in the query or a form body (RFC 6750 §2.2, §2.3: not supported).
        public static let tokenInParameter = Reason(rawValue: "token_in_parameter")

        // The token (RFC 9068 §4).
        /// Not a compact JWS, too large, or its claims are not a JSON object.
        public static let malformedToken = Reason(rawValue: "malformed_token")
        /// Its header or claims repeat a member name (RFC 7515 §5.2, RFC 7519 §4).
        public static let repeatedMember = Reason(rawValue: "repeated_member")
        /// Header `typ` is not `at+jwt` (RFC 9068 §4): an ID token or another JWT.
        public static let wrongType = Reason(rawValue: "wrong_type")
        /// Header `alg` is not accepted (`none`, HMAC, or not configured).
        public static let unacceptableAlgorithm = Reason(rawValue: "unacceptable_algorithm")
        /// No key of the issuer's JWKS has the header's `kid`.
        public static let unknownKey = Reason(rawValue: "unknown_key")
        /// The signature does not verify.
        public static let badSignature = Reason(rawValue: "bad_signature")
        /// `iss` is not the configured issuer.
        public static let wrongIssuer = Reason(rawValue: "wrong_issuer")
        /// `aud` does not contain this API's resource identifier.
        public static let wrongAudience = Reason(rawValue: "wrong_audience")
        /// `exp` has passed.
        public static let expired = Reason(rawValue: "expired")
        /// `nbf` or `iat` is in the future.
        public static let notYetValid = Reason(rawValue: "not_yet_valid")
        /// A claim RFC 9068 §2.2 requires is missing or of the wrong type.
        public static let missingClaim = Reason(rawValue: "missing_claim")
        /// A required scope was not granted (RFC 6750 §3.1).
        public static let insufficientScope = Reason(rawValue: "insufficient_scope")
        /// `acr` is weaker than the configured minimum (RFC 9470 §3).
        public static let insufficientACR = Reason(rawValue: "insufficient_acr")

        // The binding (RFC 9449 §7).
        /// A DPoP-bound token sent with the Bearer scheme.
        public static let boundTokenAsBearer = Reason(rawValue: "bound_token_as_bearer")
        /// The DPoP scheme with a token that is not DPoP-bound.
        public static let unboundTokenAsDPoP = Reason(rawValue: "unbound_token_as_dpop")
        /// A certificate-bound token (RFC 8705 `cnf.x5t#S256`) without a client certificate.
        public static let certificateRequired = Reason(rawValue: "certificate_required")
        /// A certificate-bound token with another client certificate than it is bound to.
        public static let certificateMismatch = Reason(rawValue: "certificate_mismatch")
        /// A bearer token where only sender-constrained tokens are accepted.
        public static let senderConstraintRequired = Reason(rawValue: "sender_constraint_required")
        /// The DPoP scheme without a `DPoP` header.
        public static let missingProof = Reason(rawValue: "missing_dpop_proof")
        /// The proof fails a check of RFC 9449 §4.3 (form, signature, `htm`, `htu`, `iat`, `ath`).
        public static let invalidProof = Reason(rawValue: "invalid_dpop_proof")
        /// The proof's key is not the one the token is bound to (`cnf.jkt`).
        public static let proofKeyMismatch = Reason(rawValue: "dpop_key_mismatch")
        /// The proof's `jti` was seen before.
        public static let replayedProof = Reason(rawValue: "replayed_dpop_proof")
        /// The replay cache is full of live entries: the proof cannot be recorded, so it is refused.
        public static let replayCacheFull = Reason(rawValue: "replay_cache_full")
    }

    /// What failed.
    public let reason: Reason
    /// The wire error: `error` and `error_description` (RFC 6749 §5.2's characters only).
    public let error: OAuthError
    /// The scopes the resource needs, for the `scope` attribute of an `insufficient_scope` challenge (RFC 6750 §3).
    public let requiredScopes: [String]
    /// Whether the answer concerns DPoP (the DPoP scheme was used, or the token is DPoP-bound),
    /// so the error goes in the `DPoP` challenge rather than the `Bearer` one (RFC 9449 §7.1).
    public let concernsDPoP: Bool

    /// A failure for `reason` with the wire code ``defaultCode(for:)``.
    /// The failure for an `Authorization` header that cannot be used (``SignetCore/AuthorizationCredentials``).
    init(_ problem: AuthorizationCredentials.Problem) {
        let reason: Reason
        switch problem {
        case .repeated: reason = .repeatedAuthorization
        case .unsupportedScheme: reason = .unsupportedScheme
        case .missingToken, .notToken68: reason = .malformedAuthorization
        case .tooLarge: reason = .malformedToken
        }
        self.init(reason, problem.description)
    }

    public init(_ reason: Reason, _ description: String, requiredScopes: [String] = [], concernsDPoP: Bool = false) {
        self.reason = reason
        self.error = OAuthError(Self.defaultCode(for: reason), description)
        self.requiredScopes = requiredScopes
        self.concernsDPoP = concernsDPoP
    }

    /// The same failure, told to answer in the DPoP challenge.
    func aboutDPoP() -> AccessTokenFailure {
        AccessTokenFailure(reason, error.errorDescription ?? "", requiredScopes: requiredScopes, concernsDPoP: true)
    }

    /// insufficient_user_authentication — RFC 9470 §3: the authentication behind the token is too weak.
    public static let insufficientUserAuthentication: OAuthError.Code = "insufficient_user_authentication"

    /// The OAuth error code of `reason` — RFC 6750 §3.1, RFC 9449 §7.1, RFC 9470 §3.
    public static func defaultCode(for reason: Reason) -> OAuthError.Code {
        switch reason {
        case .missingToken, .unsupportedScheme, .repeatedAuthorization, .malformedAuthorization, .tokenInParameter: .invalidRequest
        case .insufficientScope: .insufficientScope
        case .insufficientACR: insufficientUserAuthentication
        case .missingProof, .invalidProof, .proofKeyMismatch, .replayedProof: .invalidDPoPProof
        case .replayCacheFull: .temporarilyUnavailable
        default: .invalidToken
        }
    }

    /// The HTTP status: 400 for a malformed request, 401 for missing or bad credentials,
    /// 403 for missing scope, 503 when proofs cannot be recorded.
    public var status: Int {
        switch reason {
        case .missingToken, .unsupportedScheme: 401
        case .replayCacheFull: 503
        default:
            switch error.error {
            case .invalidRequest: 400
            case .insufficientScope: 403
            default: 401
            }
        }
    }

    /// Whether the request carried no usable credentials, so the challenge names no error (RFC 6750 §3.1).
    public var isMissingCredentials: Bool { reason == .missingToken || reason == .unsupportedScheme }

    /// `WWW-Authenticate` field values for this answer — RFC 6750 §3, RFC 9449 §7.1.
    ///
    /// A `DPoP` challenge always (with `algs`), and a `Bearer` challenge when bearer tokens are
    /// accepted. The error, its description and (for `insufficient_scope`) the `scope` attribute
    /// go in the challenge of the scheme the request concerned. A 503 has no challenge.
    public func challenges(configuration: AccessTokenVerifierConfiguration) -> [String] {
        guard status != 503 else { return [] }
        let offersBearer = !configuration.requireSenderConstrained
        let errorOnDPoP = concernsDPoP || !offersBearer
        var attributes: [(String, String)] = []
        if !isMissingCredentials {
            attributes.append(("error", error.error.rawValue))
            if let description = error.errorDescription { attributes.append(("error_description", description)) }
            if reason == .insufficientScope, !requiredScopes.isEmpty { attributes.append(("scope", requiredScopes.joined(separator: " "))) }
            if reason == .insufficientACR, let minimum = configuration.minimumACR { attributes.append(("acr_values", minimum)) }
        }
        let algs = ("algs", configuration.acceptedAlgorithms.sorted().joined(separator: " "))
        var challenges = [AuthenticationChallenge(scheme: "DPoP", attributes: [algs] + (errorOnDPoP ? attributes : []))]
        if offersBearer { challenges.append(AuthenticationChallenge(scheme: "Bearer", attributes: errorOnDPoP ? [] : attributes)) }
        return challenges.map(\.headerValue)
    }

    public var description: String { "\(reason): \(error.errorDescription ?? "")" }

    public static func == (lhs: AccessTokenFailure, rhs: AccessTokenFailure) -> Bool { lhs.reason == rhs.reason }
    public func hash(into hasher: inout Hasher) { hasher.combine(reason) }
}
