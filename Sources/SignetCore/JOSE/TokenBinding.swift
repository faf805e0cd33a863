// What a sender-constrained access token asks of the request that presents it — RFC 9449 §7, RFC 8705 §3.
// One rule for the provider's own resources and the kit's AccessTokenVerifier.

/// The binding of an access token (its `cnf`), and what it demands at a resource.
///
/// A DPoP-bound token (`cnf.jkt`) only with the DPoP scheme and a proof made with that key; the
/// DPoP scheme only with a DPoP-bound token; a certificate-bound token (`cnf.x5t#S256`) only
/// over mutual TLS with that certificate. Thumbprints are compared in constant time.
public struct TokenBinding: Sendable, Equatable {
    /// Why a presentation does not fit the binding.
    public enum Refusal: Sendable, Equatable {
        /// Certificate-bound, but no client certificate was presented.
        case certificateRequired
        /// Certificate-bound to another certificate than the one presented.
        case certificateMismatch
        /// DPoP-bound, but sent with the Bearer scheme.
        case boundTokenAsBearer
        /// Not DPoP-bound, but sent with the DPoP scheme.
        case unboundTokenAsDPoP
    }

    /// cnf.jkt — RFC 9449 §6.1: the DPoP key's thumbprint.
    public let dpopThumbprint: String?
    /// cnf.x5t#S256 — RFC 8705 §3.1: the client certificate's thumbprint.
    public let certificateThumbprint: String?

    public init(dpopThumbprint: String?, certificateThumbprint: String?) {
        self.dpopThumbprint = dpopThumbprint
        self.certificateThumbprint = certificateThumbprint
    }

    /// The binding of a token with confirmation `cnf`.
    public init(_ cnf: Confirmation?) {
        self.init(dpopThumbprint: cnf?.jkt, certificateThumbprint: cnf?.x5tS256)
    }

    /// Whether a DPoP proof must come with the token.
    public var needsProof: Bool { dpopThumbprint != nil }

    /// What is wrong with presenting the token with `scheme` and the client certificate whose
    /// thumbprint is `certificate` (`nil`: none), or `nil` when both fit. The certificate is
    /// judged first; a proof, when ``needsProof``, is then checked with ``proofMatches(_:)``.
    public func refusal(scheme: AuthorizationCredentials.Scheme, certificate: String?) -> Refusal? {
        if let certificateThumbprint {
            guard let certificate else { return .certificateRequired }
            guard ConstantTime.equals(certificate, certificateThumbprint) else { return .certificateMismatch }
        }
        switch (dpopThumbprint, scheme) {
        case (nil, .dpop): return .unboundTokenAsDPoP
        case (.some, .bearer): return .boundTokenAsBearer
        default: return nil
        }
    }

    /// Whether a proof made with the key of thumbprint `jkt` proves this DPoP binding.
    public func proofMatches(_ jkt: String) -> Bool {
        guard let dpopThumbprint else { return false }
        return ConstantTime.equals(jkt, dpopThumbprint)
    }
}
