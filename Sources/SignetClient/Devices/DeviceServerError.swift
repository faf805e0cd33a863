// The provider's device errors (docs/devices.md, "Device errors"), to compare serverError with.
import SignetCore

/// The `error` codes the mutual-TLS device endpoints answer 401 with.
///
/// They arrive in ``SignetClientError/serverError``; ``DeviceEnrolment/status()`` turns the ones
/// that describe the device into a ``DeviceStatus`` instead of throwing.
public enum DeviceServerError {
    /// No client certificate was presented: the transport did not present it, or a proxy dropped it.
    public static let certificateRequired = OAuthError.Code(rawValue: "device_certificate_required")
    /// The certificate is not one of the provider's device certificates, or is expired or not yet
    /// valid; `error_description` says which (`foreign_issuer`, `expired`, `not_yet_valid`,
    /// `not_for_client_authentication`, `no_device_identity`).
    public static let invalidCertificate = OAuthError.Code(rawValue: "invalid_device_certificate")
    /// A valid certificate whose instance was never activated (an initial certificate), or that is
    /// not the device's current one.
    public static let notActivated = OAuthError.Code(rawValue: "device_not_activated")
    /// The device was deactivated, replaced, removed or locked; `error_description` names which.
    public static let revoked = OAuthError.Code(rawValue: "device_revoked")
}
