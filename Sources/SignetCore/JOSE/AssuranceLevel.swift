// Signet's authentication assurance levels (acr values) and how they compare.

/// The `acr` values Signet issues, weakest first (OIDC Core §2 `acr`).
public enum AssuranceLevel {
    /// One factor: a password.
    public static let oneFactor = "urn:signet:loa:1"
    /// Two factors: a password and a one-time code (or stronger).
    public static let twoFactors = "urn:signet:loa:2"
    /// Every level, weakest first.
    public static let ordered = [oneFactor, twoFactors]

    /// Whether an ID token's `acr` satisfies the `acr_values` a client asked for
    /// (OIDC Core §3.1.2.1): nothing asked for is always satisfied; otherwise the `acr` must be
    /// one that was asked for, or a known level at least as strong as the weakest one asked for.
    /// A missing or unknown `acr` satisfies no request.
    public static func satisfies(acr: String?, requested: [String]) -> Bool {
        guard !requested.isEmpty else { return true }
        guard let acr else { return false }
        if requested.contains(acr) { return true }
        guard let rank = ordered.firstIndex(of: acr) else { return false }
        let asked = requested.compactMap { ordered.firstIndex(of: $0) }
        guard let weakest = asked.min() else { return false }
        return rank >= weakest
    }
}
