// What a resource server (an API) needs to know to verify the access tokens sent to it.
import Foundation
import SignetCore

/// The settings of an ``AccessTokenVerifier``: whose tokens, for which API, and how strict.
///
/// A plain value with safe defaults. There is no default audience: a verifier that accepted
/// a token made for any API would let one API replay its callers' tokens at another
/// (RFC 9068 §4, RFC 8707 §1).
public struct AccessTokenVerifierConfiguration: Sendable {
    /// The provider's issuer identifier — OIDC Discovery §2, compared exactly with the token's `iss` (RFC 9068 §4).
    ///
    /// Its discovery document names the `jwks_uri` the signing keys are read from.
    public var issuer: String
    /// This API's resource identifier — RFC 8707 §2, e.g. `https://api.example.com`.
    ///
    /// The token's `aud` must contain it (RFC 9068 §4). Register the same value as one of the
    /// client's resources at the provider.
    public var audience: String
    /// The JWS algorithms accepted for tokens and DPoP proofs. Default: ``SignetCore/JOSEHeader/acceptedAlgorithms``.
    ///
    /// Only asymmetric algorithms count: anything outside ``SignetCore/JOSEHeader/acceptedAlgorithms``
    /// (`none`, HMAC) is ignored, so a token signed with a shared secret never passes.
    public var algorithms: Set<String>
    /// How far the provider's clock, the caller's and ours may disagree, in seconds. Default 60.
    ///
    /// Applies to the token's `exp`, `nbf` and `iat`, and to the DPoP proof's `iat`.
    public var clockSkew: Int
    /// How old a DPoP proof may be, in seconds — RFC 9449 §11.1. Default 60.
    public var dpopProofLifetime: TimeInterval
    /// Whether only sender-constrained (DPoP-bound, `cnf.jkt`) tokens are accepted. Default `true`.
    ///
    /// FAPI 2.0 Security Profile §5.3.4: resource servers shall accept only sender-constrained
    /// tokens. With `false`, bearer tokens (RFC 6750) are accepted too; bound tokens always need their proof.
    public var requireSenderConstrained: Bool
    /// The weakest `acr` accepted (OIDC Core §2), e.g. ``SignetCore/AssuranceLevel/twoFactors``. Default `nil`: any.
    ///
    /// Compared as ``SignetCore/AssuranceLevel/satisfies(acr:requested:)`` does: the same value,
    /// or a known stronger one. A token without `acr` does not satisfy a minimum.
    public var minimumACR: String?
    /// The largest token accepted, in bytes. Default 8 KiB.
    public var maximumTokenSize: Int
    /// The shortest time between two JWKS fetches caused by an unknown `kid`, in seconds. Default 60.
    public var keySetRefetchInterval: TimeInterval
    /// How long a fetched JWKS is trusted before it is fetched again, in seconds. Default one day.
    public var keySetMaximumAge: TimeInterval

    /// A configuration with documented defaults.
    ///
    /// - Parameters:
    ///   - issuer: the provider's issuer identifier; `https`, or `http` on a loopback host for development.
    ///   - audience: this API's resource identifier (RFC 8707); required.
    ///   - algorithms: accepted JWS algorithms (asymmetric only).
    ///   - clockSkew: allowed clock skew in seconds.
    ///   - dpopProofLifetime: how old a DPoP proof may be, in seconds.
    ///   - requireSenderConstrained: accept only DPoP-bound tokens.
    ///   - minimumACR: the weakest `acr` accepted, if any.
    public init(
        issuer: String,
        audience: String,
        algorithms: Set<String> = JOSEHeader.acceptedAlgorithms,
        clockSkew: Int = 60,
        dpopProofLifetime: TimeInterval = 60,
        requireSenderConstrained: Bool = true,
        minimumACR: String? = nil,
        maximumTokenSize: Int = 8_192,
        keySetRefetchInterval: TimeInterval = 60,
        keySetMaximumAge: TimeInterval = 86_400
    ) {
        self.issuer = issuer
        self.audience = audience
        self.algorithms = algorithms
        self.clockSkew = clockSkew
        self.dpopProofLifetime = dpopProofLifetime
        self.requireSenderConstrained = requireSenderConstrained
        self.minimumACR = minimumACR
        self.maximumTokenSize = maximumTokenSize
        self.keySetRefetchInterval = keySetRefetchInterval
        self.keySetMaximumAge = keySetMaximumAge
    }

    /// The algorithms actually accepted: the configured ones that are asymmetric and known.
    var acceptedAlgorithms: Set<String> { algorithms.intersection(JOSEHeader.acceptedAlgorithms) }
}
