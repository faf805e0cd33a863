// AccessTokenMiddleware in an API of its own: a custom context, a form body handed on, and an unreachable issuer.
import Foundation
import Hummingbird
import Logging
import SignetCore
import SignetRelyingParty
import SignetResourceServer
import SignetScript
import SignetTesting
import Testing

/// An API's own context, with the token property the middleware fills in.
struct NotesContext: AccessTokenRequestContext {
    var coreContext: CoreRequestContextStorage
    var accessToken: VerifiedAccessToken?
    init(source: ApplicationRequestContextSource) { coreContext = .init(source: source) }
}

/// Runs a notes API whose `POST /notes` echoes a form field for the token's subject.
func withNotesAPI<Result: Sendable>(verifier: AccessTokenVerifier, _ body: (_ baseURL: String) async throws -> Result) async throws -> Result {
    let router = Router(context: NotesContext.self)
    router.group("notes")
        .add(middleware: AccessTokenMiddleware(verifier: verifier, publicBaseURL: API.publicURL))
        .post { request, context in
            let token = try context.requireAccessToken()
            var request = request
            let form = FormParameters(encoded: String(buffer: try await request.collectBody(upTo: 4_096)))
            return "\(token.subject): \(form?["text"] ?? "-")"
        }
    router.get("unguarded") { _, context in try context.requireAccessToken().subject }
    var logger = Logger(label: "notes.test")
    logger.logLevel = .critical
    return try await withRunningService("the notes API", logger: logger) { [logger] listening in
        Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in await listening(channel.localAddress?.port ?? 0) }, logger: logger)
    } _: { port in
        try await body("http://127.0.0.1:\(port)")
    }
}

/// A network on which nothing answers.
struct UnreachableNetwork: HTTPTransport {
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        throw SignetError(.transportFailure, "no route to \(request.url)")
    }
}

@Suite("AccessTokenMiddleware")
struct AccessTokenMiddlewareTests {
    @Test(
        "with a custom context: a form body without access_token reaches the route intact; with one it is refused; a route outside the group fails closed"
    )
    func formBody() async throws {
        try await withTestProvider { provider in
            let backend = try await Backend.register(provider)
            let token = try await backend.tokens(dpop: false).accessToken
            let clock = provider.clock
            let verifier = AccessTokenVerifier(
                configuration: .init(issuer: provider.issuer, audience: API.audience, requireSenderConstrained: false), now: { clock.now })
            try await withNotesAPI(verifier: verifier) { base in
                let bearer = ("Authorization", "Bearer \(token)")
                let posted = try await ScriptedBrowser().post(base + "/notes", form: [("text", "hello")], headers: [bearer])
                #expect(posted.status == 200, "\(posted.body)")
                #expect(posted.body == "\(backend.userID): hello")
                let smuggled = try await ScriptedBrowser().post(
                    base + "/notes", form: [("text", "hello"), ("access_token", token)], headers: [bearer])
                #expect(smuggled.status == 400)
                #expect(smuggled.oauthError == "invalid_request")
                let bodyOnly = try await ScriptedBrowser().post(base + "/notes", form: [("access_token", token)])
                #expect(bodyOnly.status == 400)
                // A route added outside the protected group serves nobody.
                #expect(try await ScriptedBrowser().get(base + "/unguarded", headers: [bearer]).status == 401)
            }
        }
    }

    @Test("when the issuer's keys cannot be fetched the request is not judged: 503 temporarily_unavailable, no challenge")
    func unreachableIssuer() async throws {
        let verifier = AccessTokenVerifier(
            configuration: .init(issuer: "https://id.example.com", audience: API.audience, requireSenderConstrained: false),
            transport: UnreachableNetwork())
        try await withNotesAPI(verifier: verifier) { base in
            // Well-formed enough that its key must be looked up.
            let token = try encoded(["alg": "ES256", "typ": "at+jwt", "kid": "k"]) + "." + encoded(["sub": "x"]) + ".AA"
            let answer = try await ScriptedBrowser().post(base + "/notes", form: [("text", "x")], headers: [("Authorization", "Bearer \(token)")])
            #expect(answer.status == 503)
            #expect(answer.oauthError == "temporarily_unavailable")
            #expect(answer.challenges.isEmpty)
        }
    }
}
