// Which URLs a client may send credentials and tokens to.
import Foundation

/// The rule for a provider's issuer and endpoints: an absolute `https` URL without a fragment,
/// or `http` on a loopback host for development.
///
/// The kit and the SDK trust what these endpoints answer because TLS authenticates them (an ID
/// token straight from the token endpoint needs no signature check: OIDC Core §3.1.3.7 item 6),
/// so a plain-http endpoint off the machine is refused, never used.
public enum SecureEndpoint {
    /// `url` when it fits the rule; `name` says which value it is in the error.
    ///
    /// - Throws: `invalid_configuration` for an empty, relative or fragment-bearing URL, or one
    ///   that is not https (outside loopback).
    @discardableResult
    public static func check(_ url: String, name: String) throws -> String {
        guard !url.isEmpty else { throw SignetError(.invalidConfiguration, "the provider offers no \(name)") }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty, components.fragment == nil
        else { throw SignetError(.invalidConfiguration, "\(name) is not an absolute URL") }
        switch scheme {
        case "https": return url
        case "http" where Loopback.isHost(host): return url
        default: throw SignetError(.invalidConfiguration, "\(name) must use https")
        }
    }
}
