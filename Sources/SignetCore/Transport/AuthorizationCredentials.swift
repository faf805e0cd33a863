// Reading the access token of a request's Authorization header — RFC 6750 §2.1, RFC 9449 §7.1.
import Foundation

/// What a request's `Authorization` header values present: nothing, a token with its scheme,
/// or a refusal. Read the same way by the provider's own resources and the kit's verifier.
public enum AuthorizationCredentials: Sendable, Equatable {
    /// The schemes an access token may come with.
    public enum Scheme: Sendable, Equatable { case bearer, dpop }

    /// Why the header cannot be used.
    public enum Problem: Sendable, Equatable {
        /// More than one `Authorization` header.
        case repeated
        /// A scheme other than Bearer or DPoP.
        case unsupportedScheme
        /// The scheme without a token.
        case missingToken
        /// A token larger than allowed.
        case tooLarge
        /// A token that is not a token68 (RFC 7235 §2.1).
        case notToken68

        /// A sentence for the error description.
        public var description: String {
            switch self {
            case .repeated: "send exactly one Authorization header"
            case .unsupportedScheme: "use the DPoP or Bearer authorization scheme"
            case .missingToken: "the Authorization header carries no token"
            case .tooLarge: "the access token is too large"
            case .notToken68: "the access token is not a token68 (RFC 7235 section 2.1)"
            }
        }
    }

    case none
    case token(String, Scheme)
    case refused(Problem)

    /// The credentials in `values` (every `Authorization` header value of the request).
    public static func read(_ values: [String], maximumSize: Int = 8_192) -> AuthorizationCredentials {
        guard !values.isEmpty else { return .none }
        guard values.count == 1, let value = values.first else { return .refused(.repeated) }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let scheme: Scheme
        switch parts.first?.lowercased() {
        case "bearer": scheme = .bearer
        case "dpop": scheme = .dpop
        default: return .refused(.unsupportedScheme)
        }
        let token = parts.count == 2 ? parts[1].drop(while: { $0 == " " }) : ""
        guard !token.isEmpty else { return .refused(.missingToken) }
        guard token.utf8.count <= maximumSize else { return .refused(.tooLarge) }
        guard isToken68(token) else { return .refused(.notToken68) }
        return .token(String(token), scheme)
    }

    /// token68 — RFC 7235 §2.1: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
    public static func isToken68(_ text: some StringProtocol) -> Bool {
        let bytes = Array(text.utf8)
        let body = bytes.prefix { $0 != UInt8(ascii: "=") }
        guard !body.isEmpty, bytes[body.count...].allSatisfy({ $0 == UInt8(ascii: "=") }) else { return false }
        return body.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"): true
            default: false
            }
        }
    }
}
