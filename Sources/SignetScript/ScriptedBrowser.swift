// A minimal browser for programs that play a person: real HTTP, a cookie jar, no automatic redirects.
import AsyncHTTPClient
import NIOSSL
import Foundation
import NIOCore
import NIOHTTP1
import SignetCore
import Synchronization

/// An HTTP answer as the scripted browser sees it.
public struct ScriptedResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let body: String

    /// The first value of a header (case-insensitive).
    public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    /// Every value of a header.
    public func headers(_ name: String) -> [String] { headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value) }
    /// The body as a JSON object.
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    /// The body decoded.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: Data(body.utf8)) }
    /// The OAuth `error` of a JSON error body.
    public var oauthError: String? { json["error"] as? String }
    /// The query parameters of the `Location` header.
    public var locationParameters: FormParameters? {
        guard let location = header("Location"), let query = URLComponents(string: location)?.percentEncodedQuery else { return nil }
        return FormParameters(encoded: query)
    }
}

/// Sends requests like a browser would, keeping cookies between them.
public final class ScriptedBrowser: Sendable {
    /// One client for all browsers; redirects are never followed, so tests see each hop. Many
    /// connections a host and a generous wait for one: tests fire 50 requests at once, and a busy
    /// machine must not turn waiting for a connection into a failure.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout.connect = .seconds(60)
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    private let cookies = Mutex<[String: String]>([:])
    /// The TLS settings of this browser's requests (e.g. a device's client certificate); else ``defaultTLS``.
    private let tls: TLSConfiguration?

    /// The TLS settings of browsers made without their own, for the task: `withTestProvider(tls: true)`
    /// sets one that trusts its server's certificate.
    @TaskLocal public static var defaultTLS: TLSConfiguration?

    /// - Parameter tls: TLS settings for every request, e.g. ``TestTLS/client(presenting:key:)``.
    public init(tls: TLSConfiguration? = nil) { self.tls = tls }

    /// The cookies the browser holds.
    public var cookieJar: [String: String] { cookies.withLock { $0 } }

    /// Sets or removes a cookie by hand.
    public func setCookie(_ name: String, _ value: String?) { cookies.withLock { $0[name] = value } }

    public func get(_ url: String, headers: [(String, String)] = []) async throws -> ScriptedResponse {
        try await send("GET", url, body: nil, headers: headers)
    }

    /// POSTs a form (`application/x-www-form-urlencoded`) unless a content type is given.
    public func post(_ url: String, form: [(String, String)], headers: [(String, String)] = []) async throws -> ScriptedResponse {
        let body = FormParameters(form.map { (name: $0.0, value: $0.1) }).encoded
        var headers = headers
        if !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        }
        return try await send("POST", url, body: body, headers: headers)
    }

    /// Sends any request.
    public func send(_ method: String, _ url: String, body: String?, headers: [(String, String)] = []) async throws -> ScriptedResponse {
        try await send(method, url, bytes: body.map { Array($0.utf8) }, headers: headers)
    }

    /// Sends any request with a body of raw bytes (which need not be UTF-8).
    public func send(_ method: String, _ url: String, bytes body: [UInt8]?, headers: [(String, String)] = []) async throws -> ScriptedResponse {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        if url.hasPrefix("https://") { request.tlsConfiguration = tls ?? Self.defaultTLS }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let jar = cookieJar
        if !jar.isEmpty, !headers.contains(where: { $0.0.lowercased() == "cookie" }) {
            request.headers.add(name: "Cookie", value: jar.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await Self.client.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 4 * 1024 * 1024)
        for setCookie in response.headers["Set-Cookie"] { remember(setCookie) }
        return ScriptedResponse(
            status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: String(buffer: buffer))
    }

    private func remember(_ setCookie: String) {
        let parts = setCookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { return }
        let name = String(pair[..<equals]), value = String(pair[pair.index(after: equals)...])
        let expired = parts.contains { $0.lowercased() == "max-age=0" } || value.isEmpty
        cookies.withLock { $0[name] = expired ? nil : value }
    }
}
