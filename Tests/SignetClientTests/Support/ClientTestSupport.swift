// Helpers for SDK tests: a transport that records and rewrites, a browser agent, token surgery.
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTesting
import Synchronization
import Testing

/// The real URLSession transport, recording every request and optionally rewriting answers.
final class RecordingTransport: HTTPTransport {
    typealias Rewrite = @Sendable (HTTPTransportRequest, HTTPTransportResponse) -> HTTPTransportResponse
    private let inner = URLSessionTransport()
    private let log = Mutex<[HTTPTransportRequest]>([])
    private let rewrite: Mutex<Rewrite?>

    init(rewrite: Rewrite? = nil) { self.rewrite = Mutex(rewrite) }

    func setRewrite(_ rewrite: Rewrite?) { self.rewrite.withLock { $0 = rewrite } }

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        log.withLock { $0.append(request) }
        let response = try await inner.send(request)
        return rewrite.withLock { $0 }.map { $0(request, response) } ?? response
    }

    var requests: [HTTPTransportRequest] { log.withLock { $0 } }

    /// The requests to a URL path (e.g. `/token`).
    func requests(to path: String) -> [HTTPTransportRequest] { requests.filter { URLComponents(string: $0.url)?.path == path } }

    /// The form parameters of a request's body.
    static func form(_ request: HTTPTransportRequest) -> FormParameters {
        FormParameters(encoded: String(decoding: request.body ?? Data(), as: UTF8.self)) ?? FormParameters()
    }
}

enum TestApp {
    static let redirectURI = "com.example.app:/callback"
    static let postLogoutRedirectURI = "com.example.app:/signed-out"

    /// Registers the app (with a post-logout redirect) and a user.
    static func seed(_ provider: TestProvider) async throws {
        _ = try await provider.admin.addClient(
            .init(
                id: "app", name: "Example App", authMethod: .none, redirectURIs: [redirectURI], postLogoutRedirectURIs: [postLogoutRedirectURI],
                nativeLogin: true))
        try await provider.admin.addUser(username: "erin", password: "erins passphrase", name: "Erin", phoneNumber: "+4522222222")
    }

    /// A client of the test provider on its clock (shifted by `clockOffset` seconds).
    static func client(
        _ provider: TestProvider, transport: (any HTTPTransport)? = nil, dpop: (any DPoPKeyStore)? = nil, clockOffset: TimeInterval = 0
    ) -> SignetClient {
        let clock = provider.clock
        return SignetClient(
            configuration: .init(issuer: provider.issuer, clientID: "app", redirectURI: redirectURI, postLogoutRedirectURI: postLogoutRedirectURI),
            transport: transport ?? URLSessionTransport(), dpopKeyStore: dpop, now: { clock.now.addingTimeInterval(clockOffset) })
    }

    /// A user agent that signs in as erin on the hosted page, then lets `edit` change the redirect.
    static func agent(_ provider: TestProvider, presented: PresentedURLs? = nil, edit: @escaping @Sendable (URL) -> URL = { $0 }) -> ScriptedUserAgent
    {
        ScriptedUserAgent { url, redirectURI in
            presented?.append(url)
            #expect(redirectURI.absoluteString == TestApp.redirectURI)
            return edit(try await provider.browserRedirect(for: url, username: "erin", password: "erins passphrase"))
        }
    }
}

/// The URLs an agent was asked to show.
final class PresentedURLs: Sendable {
    private let urls = Mutex<[URL]>([])
    func append(_ url: URL) { urls.withLock { $0.append(url) } }
    var first: URL? { urls.withLock { $0.first } }
}

/// URL surgery for hostile redirects.
func replacingQueryItem(_ name: String, with value: String?, in url: URL) -> URL {
    var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
    var items = (components.queryItems ?? []).filter { $0.name != name }
    if let value { items.append(URLQueryItem(name: name, value: value)) }
    components.queryItems = items
    return components.url!
}

func queryItem(_ name: String, in url: URL) -> String? {
    URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
}

/// The claims of a compact JWS, read without checking it.
func jwtClaims(_ token: String) throws -> [String: Any] {
    let payload = try #require(token.split(separator: ".").dropFirst().first.flatMap { Data(base64URLEncoded: String($0)) })
    return try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
}

/// Token-response surgery: changes the JSON members, and the ID token's claims (its signature left
/// as it was: the SDK does not check it, the token came over TLS).
func rewritingTokenResponse(members: [String: Any] = [:], idTokenClaims: [String: Any] = [:]) -> RecordingTransport.Rewrite {
    let members = UncheckedBox(members), claims = UncheckedBox(idTokenClaims)
    return { request, response in
        guard URLComponents(string: request.url)?.path == "/token", response.isSuccess,
            var json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        else { return response }
        for (name, value) in members.value { json[name] = value }
        if !claims.value.isEmpty, let idToken = json["id_token"] as? String {
            var parts = idToken.split(separator: ".").map(String.init)
            var payload =
                idToken.split(separator: ".").dropFirst().first.flatMap { Data(base64URLEncoded: String($0)) }
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
            for (name, value) in claims.value { payload[name] = value }
            parts[1] = ((try? JSONSerialization.data(withJSONObject: payload)) ?? Data()).base64URLEncodedString()
            json["id_token"] = parts.joined(separator: ".")
        }
        var rewritten = response
        rewritten.body = (try? JSONSerialization.data(withJSONObject: json)) ?? response.body
        return rewritten
    }
}

/// JSON values are immutable here; only read inside the rewrite.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The claims of the DPoP proof a request carried.
func proofClaims(_ request: HTTPTransportRequest) throws -> [String: Any] {
    try jwtClaims(try #require(request.header("DPoP")))
}
