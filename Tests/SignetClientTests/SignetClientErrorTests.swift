import Foundation
import SignetClient
import SignetCore
import SignetScript
import SignetTesting
import Testing

@Suite("SignetClientError: stable codes, causes kept, words for people")
struct SignetClientErrorTests {
    @Test("a network failure is transport, retryable, with the transport's error as its cause")
    func transportCause() async throws {
        let port = try FreePort.find()
        let client = SignetClient(configuration: .init(issuer: "http://127.0.0.1:\(port)", clientID: "app", redirectURI: "com.example.app:/callback"))
        do {
            _ = try await client.discover()
            Issue.record("nothing listens there")
        } catch let error as SignetClientError {
            #expect(error.code == .transport)
            #expect(error.isRetryable)
            #expect((error.underlying as? SignetError)?.code == .transportFailure)
        }
    }

    @Test("equality is on the code and the server's error, not on the cause or the explanation")
    func equality() {
        struct Cause: Error {}
        let plain = SignetClientError(.invalidIDToken, isRetryable: false)
        #expect(plain == SignetClientError(.invalidIDToken, isRetryable: false, idTokenFailures: [.expired], reason: "x", underlying: Cause()))
        #expect(plain != SignetClientError(.cancelled, isRetryable: false))
        #expect(
            SignetClientError(.server, serverError: OAuthError(.invalidGrant), isRetryable: false)
                != SignetClientError(.server, serverError: OAuthError(.accessDenied), isRetryable: false))
    }

    @Test("LocalizedError: errorDescription names what happened, with the failures and the server's description")
    func localized() {
        let idToken = SignetClientError(.invalidIDToken, isRetryable: false, idTokenFailures: [.nonceMismatch, .expired])
        let text = idToken.errorDescription
        #expect(text?.contains(IDTokenFailure.nonceMismatch.rawValue) == true)
        #expect(text?.contains(IDTokenFailure.expired.rawValue) == true)
        #expect((idToken as any Error).localizedDescription == idToken.errorDescription)
        let server = SignetClientError(.server, serverError: OAuthError(.accessDenied, "the user said no"), isRetryable: false)
        #expect(server.errorDescription?.contains("access_denied") == true)
        #expect(server.errorDescription?.contains("the user said no") == true)
        #expect(SignetClientError(.cancelled, isRetryable: false).errorDescription == "The sign-in was cancelled.")
        #expect(String(describing: idToken).hasPrefix("invalid_id_token: "))
    }
}
