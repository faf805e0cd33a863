// Error codes only a relying party raises.
import SignetCore

extension SignetError.Code {
    /// The authorization response's `state` is missing or is not the one sent (RFC 6749 §10.12). Final.
    ///
    /// The response does not belong to this browser's request: a forged or replayed
    /// redirect (cross-site request forgery), or the user finishing an old attempt.
    public static let stateMismatch = SignetError.Code("state_mismatch")
    /// An `issuer` or `iss` is not the configured issuer (OIDC Discovery §4.3, RFC 9207 §2.4). Final.
    ///
    /// Either a mix-up attack, where a response from one provider is passed off as another's,
    /// or a misconfigured issuer URL.
    public static let issuerMismatch = SignetError.Code("issuer_mismatch")
}
