// WWW-Authenticate challenges of OAuth resources — RFC 7235 §4.1, RFC 6750 §3, RFC 9449 §7.1.
import Foundation

/// One `WWW-Authenticate` challenge: a scheme and its auth-params.
///
/// Written by the resource-server verifier, read by the relying-party kit and the app SDK, so
/// the three agree on one form.
public struct AuthenticationChallenge: Sendable, Equatable {
    /// The auth-scheme: `Bearer` or `DPoP` as written here (a parsed challenge is given this spelling).
    public var scheme: String
    /// The auth-params in order; written as quoted strings.
    public var attributes: [(String, String)]

    public init(scheme: String, attributes: [(String, String)]) {
        self.scheme = scheme
        self.attributes = attributes
    }

    /// The challenge as a field value, e.g. `DPoP algs="ES256", error="invalid_token"`.
    ///
    /// Values are made wire-safe (``OAuthError/wireSafe(_:)``): no `"` or `\` can end the quoted
    /// string early, and nothing outside RFC 6749 §5.2's characters is sent.
    public var headerValue: String {
        guard !attributes.isEmpty else { return scheme }
        return scheme + " " + attributes.map { name, value in "\(name)=\"\(OAuthError.wireSafe(value))\"" }.joined(separator: ", ")
    }

    /// The auth-params by name (lowercased); the first of a repeated name counts.
    public var parameters: [String: String] {
        attributes.reduce(into: [:]) { result, pair in
            if result[pair.0.lowercased()] == nil { result[pair.0.lowercased()] = pair.1 }
        }
    }

    /// The challenge's `error` and `error_description` (RFC 6750 §3.1), when it names an error.
    public var oauthError: OAuthError? {
        let parameters = parameters
        guard let error = parameters["error"], !error.isEmpty else { return nil }
        return OAuthError(OAuthError.Code(rawValue: error), parameters["error_description"])
    }

    /// The Bearer or DPoP challenge in a header value, or `nil` when its scheme is neither.
    ///
    /// Hand-written: a small reader of RFC 7235 auth-params (quoted strings with `\` escapes,
    /// or tokens); no library here parses `WWW-Authenticate`.
    public init?(_ header: String) {
        let lowered = header.lowercased()
        let written: String
        if lowered.hasPrefix("bearer") {
            written = "Bearer"
        } else if lowered.hasPrefix("dpop") {
            written = "DPoP"
        } else {
            return nil
        }
        var rest = Substring(header).dropFirst(written.count)
        var attributes: [(String, String)] = []
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: " ,"))
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
            attributes.append((name, value))
        }
        self.init(scheme: written, attributes: attributes)
    }

    public static func == (lhs: AuthenticationChallenge, rhs: AuthenticationChallenge) -> Bool {
        lhs.scheme == rhs.scheme && lhs.attributes.elementsEqual(rhs.attributes) { $0 == $1 }
    }
}
