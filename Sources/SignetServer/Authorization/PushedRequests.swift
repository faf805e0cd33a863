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

    /// The pushed parameters a request to `/authorize` names, consumed (RFC 9126 §4): the uri
    /// is live and unused, it was pushed by the `client_id` sent, and every other parameter
    /// sent beside it repeats a pushed one with the same value (OIDC Core §6.2 has clients send
    /// `response_type`, `scope` and `redirect_uri` again; the pushed values govern, RFC 9101 §5).
    /// A differing or extra parameter is refused before the uri is spent, so the client can
    /// still use it. A `request_uri` that is not one of ours (an OIDC request by reference) is
    /// left to the validator, which refuses it as `request_uri_not_supported`.
    func resolve(_ parameters: FormParameters) async throws -> Resolution {
        guard let uri = parameters[OAuthParameter.requestURI], uri.hasPrefix(Self.uriPrefix) else {
            return .parameters(parameters, pushed: false, signed: false)
        }
        if let duplicated = parameters.duplicatedNames.first {
            return .refused(OAuthError(.invalidRequest, "with request_uri, \(duplicated.prefix(64)) must appear once"))
        }
        guard let clientID = parameters[OAuthParameter.clientID], !clientID.isEmpty else {
            return .refused(OAuthError(.invalidRequest, "client_id is missing"))
        }
        guard uri.utf8.count <= 128 else { return .refused(OAuthError(.invalidRequestURI, "request_uri was not issued by this provider")) }
        let uriHash = SecretDigest.hex(String(uri.dropFirst(Self.uriPrefix.count)))
        // Read first, so that a request whose parameters differ from the pushed ones spends
        // nothing (the record under a uri never changes, so what is checked here is what the
        // consume below returns). A request naming another client does spend it: a request_uri
        // seen with the wrong client_id has leaked, and is not left for anyone to use.
        guard let seen = try await pushedRequests.pushedRequest(uriHash: uriHash) else {
            return .refused(OAuthError(.invalidRequestURI, "request_uri is unknown, expired or already used"))
        }
        if seen.clientID == clientID, let name = Self.differing(parameters, from: seen) {
            return .refused(OAuthError(.invalidRequest, "with request_uri, \(name.prefix(64)) must be absent or equal to the pushed value"))
        }
        guard let record = try await pushedRequests.consumePushedRequest(uriHash: uriHash) else {
            return .refused(OAuthError(.invalidRequestURI, "request_uri is unknown, expired or already used"))
        }
        guard record.clientID == clientID else { return .refused(OAuthError(.invalidRequestURI, "request_uri was pushed by another client")) }
        guard record.expiresAt > server.now() else { return .refused(OAuthError(.invalidRequestURI, "request_uri has expired")) }
        return .parameters(Self.parameters(of: record), pushed: true, signed: record.signed ?? false)
    }

    /// The first parameter sent beside `request_uri` that does not repeat a pushed one: one the
    /// client did not push, or one whose value differs.
    static func differing(_ sent: FormParameters, from record: PushedRequestRecord) -> String? {
        let pushed = parameters(of: record)
        return sent.pairs.first { pair in
            guard pair.name != OAuthParameter.requestURI, pair.name != OAuthParameter.clientID else { return false }
            return pushed.pairs.filter { $0.name == pair.name }.map(\.value) != [pair.value]
        }?.name
    }

    static func parameters(of record: PushedRequestRecord) -> FormParameters {
        FormParameters(record.parameters.compactMap { $0.count == 2 ? (name: $0[0], value: $0[1]) : nil })
    }
}
