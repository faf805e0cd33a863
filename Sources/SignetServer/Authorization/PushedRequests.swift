// The request_uri of a pushed authorization request, consumed at /authorize — RFC 9126 §4.
import Foundation
import SignetCore
import SignetStore

/// Finds and consumes the parameters a client pushed to `/par`.
struct PushedRequests: Sendable {
    let server: ServerContext
    let pushedRequests: any PushedRequestStore

    /// The prefix of every request_uri — RFC 9126 §2.2.
    static let uriPrefix = "urn:ietf:params:oauth:request_uri:"

    /// The parameters `/authorize` goes on with, or why a `request_uri` cannot be used.
    enum Resolution {
        /// `pushed`: they came from `/par`; `signed`: from a verified request object.
        case parameters(FormParameters, pushed: Bool, signed: Bool)
        case refused(OAuthError)
    }

    /// The pushed parameters a request to `/authorize` names, consumed (RFC 9126 §4): the
    /// request carries only `client_id` and `request_uri`, the uri is live and unused, and it
    /// was pushed by that client. A `request_uri` that is not one of ours (an OIDC request by
    /// reference) is left to the validator, which refuses it as `request_uri_not_supported`.
    func resolve(_ parameters: FormParameters) async throws -> Resolution {
        guard let uri = parameters[OAuthParameter.requestURI], uri.hasPrefix(Self.uriPrefix) else { return .parameters(parameters, pushed: false, signed: false) }
        if let other = parameters.pairs.first(where: { $0.name != OAuthParameter.requestURI && $0.name != OAuthParameter.clientID }) {
            return .refused(OAuthError(.invalidRequest, "with request_uri, only client_id may be sent (\(other.name.prefix(64)) was)"))
        }
        guard !parameters.duplicatedNames.contains(where: { $0 == OAuthParameter.requestURI || $0 == OAuthParameter.clientID }) else {
            return .refused(OAuthError(.invalidRequest, "client_id and request_uri must appear once"))
        }
        guard let clientID = parameters[OAuthParameter.clientID], !clientID.isEmpty else {
            return .refused(OAuthError(.invalidRequest, "client_id is missing"))
        }
        guard uri.utf8.count <= 128 else { return .refused(OAuthError(.invalidRequestURI, "request_uri was not issued by this provider")) }
        let handle = String(uri.dropFirst(Self.uriPrefix.count))
        guard let record = try await pushedRequests.consumePushedRequest(uriHash: SecretDigest.hex(handle)) else {
            return .refused(OAuthError(.invalidRequestURI, "request_uri is unknown, expired or already used"))
        }
        guard record.clientID == clientID else { return .refused(OAuthError(.invalidRequestURI, "request_uri was pushed by another client")) }
        guard record.expiresAt > server.now() else { return .refused(OAuthError(.invalidRequestURI, "request_uri has expired")) }
        return .parameters(FormParameters(record.parameters.compactMap { $0.count == 2 ? (name: $0[0], value: $0[1]) : nil }), pushed: true, signed: record.signed ?? false)
    }
}
