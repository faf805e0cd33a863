// WWW-Authenticate challenges of OAuth resources — RFC 6750 §3, RFC 9449 §7.1.
import Foundation

/// One `WWW-Authenticate` challenge with the Bearer (RFC 6750 §3) or DPoP (RFC 9449 §7.1)
/// scheme, read by the relying-party kit and the app SDK alike.
public struct AuthenticationChallenge: Sendable, Equatable {
    /// The scheme, lowercased: `bearer` or `dpop`.
    public var scheme: String
    /// The auth-params, names lowercased, quoted values unescaped.
    public var parameters: [String: String]

    /// The challenge in a header value, or `nil` when its scheme is neither Bearer nor DPoP.
    public init?(_ header: String) {
        var rest = Substring(header)
        let lowered = header.lowercased()
        if lowered.hasPrefix("bearer") {
            scheme = "bearer"
        } else if lowered.hasPrefix("dpop") {
            scheme = "dpop"
        } else {
            return nil
        }
        rest = rest.dropFirst(scheme.count)
        var parameters: [String: String] = [:]
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: " ,")).lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\", let escaped = rest.first {
                        value.append(escaped)
                        rest = rest.dropFirst()
                    } else {
                        value.append(character)
                    }
                }
                rest = rest.dropFirst()
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            parameters[name] = value
        }
        self.parameters = parameters
    }

    /// The challenge's `error` and `error_description` (RFC 6750 §3.1), when it names an error.
    public var oauthError: OAuthError? {
        guard let error = parameters["error"], !error.isEmpty else { return nil }
        return OAuthError(OAuthError.Code(rawValue: error), parameters["error_description"])
    }
}
