// NativeLogin: the provider's stepwise login API, for apps that draw their own login screens.
import Foundation
import SignetCore

/// Runs a native login: start → scenario → username/password → SMS code → finished.
///
/// Each call returns the next ``NativeLoginStep``, a value that knows how to take the step
/// after it. Errors are ``SignetClientError``s: `isRetryable` says whether the same step may
/// be tried again (wrong password, wrong code with `attemptsLeft`, a failed SMS delivery, a
/// pause with `retryAfter`), or the login must start over.
public struct NativeLogin: Sendable {
    let client: SignetClient

    /// Starts a login for `parameters` (made fresh, or handed over by the app's backend).
    ///
    /// - Parameter rememberToken: a Remember-User-ID token from an earlier login; the username step is then skipped.
    public func start(_ parameters: AuthorizationParameters, language: String? = nil, rememberToken: String? = nil) async throws -> NativeLoginStep {
        var body: [String: String] = [:]
        for pair in parameters.formParameters.pairs { body[pair.name] = pair.value }
        body["language"] = language
        body["remember_token"] = rememberToken
        let answer = try await post("start", body)
        return try NativeLoginStep(answer: answer, parameters: parameters, client: client)
    }

    func post(_ path: String, _ body: some Encodable) async throws -> NativeLoginAnswer {
        let response = try await client.send(
            HTTPTransportRequest(
                method: "POST", url: client.configuration.issuer + "/login/native/" + path,
                headers: [("Content-Type", "application/json"), ("Accept", "application/json")], body: try JSONEncoder().encode(body)))
        guard response.isSuccess else { throw SignetClientError.from(response) }
        guard let answer = try? JSONDecoder().decode(NativeLoginAnswer.self, from: response.body) else {
            throw SignetClientError(.invalidResponse, isRetryable: false)
        }
        return answer
    }
}

/// Where a native login stands, and the calls that take it further.
public struct NativeLoginStep: Sendable {
    /// What the app should show now.
    public enum Kind: Sendable, Equatable {
        /// Choose one of these scenarios.
        case selectScenario([LoginScenario])
        /// Ask for username and password.
        case usernamePassword
        /// Ask for the password of this remembered user.
        case password(username: String?)
        /// Ask for the SMS code.
        case smsCode(SMSCodeInfo)
        /// Done: hand the result to ``NativeLoginResult/exchange()`` or to the backend.
        case finished(NativeLoginResult)
    }

    public let kind: Kind
    /// Seconds left before the login expires.
    public let expiresIn: Int?
    let session: String?
    let parameters: AuthorizationParameters
    let client: SignetClient
    let rememberedUsername: String?

    /// Chooses a scenario (from ``Kind/selectScenario(_:)``).
    public func select(scenario: LoginScenario) async throws -> NativeLoginStep {
        try await next("scenario", ["scenario": .string(scenario.rawValue)])
    }

    /// Submits username and password; `rememberMe` asks for a Remember-User-ID token at the end.
    public func submit(username: String, password: String, rememberMe: Bool = false) async throws -> NativeLoginStep {
        try await next("username_password", ["username": .string(username), "password": .string(password), "remember_me": .bool(rememberMe)])
    }

    /// Submits the password of a remembered user.
    public func submit(password: String, rememberMe: Bool = true) async throws -> NativeLoginStep {
        try await next("password", ["password": .string(password), "remember_me": .bool(rememberMe)])
    }

    /// Submits the SMS one-time code.
    public func submit(code: String) async throws -> NativeLoginStep {
        try await next("sms_code", ["code": .string(code)])
    }

    /// Asks for a new SMS code (after `resendIn` seconds; a limited number per login).
    public func resendCode() async throws -> NativeLoginStep {
        try await next("sms_code/resend", [:])
    }

    private func next(_ path: String, _ fields: [String: Field]) async throws -> NativeLoginStep {
        guard let session else { throw SignetClientError(.misuse, isRetryable: false) }
        var body = fields
        body["login_session"] = .string(session)
        body["client_id"] = .string(parameters.clientID)
        let answer = try await NativeLogin(client: client).post(path, body)
        return try NativeLoginStep(answer: answer, parameters: parameters, client: client, rememberedUsername: rememberedUsername)
    }

    /// A JSON field value.
    enum Field: Encodable {
        case string(String), bool(Bool)
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            }
        }
    }

    init(answer: NativeLoginAnswer, parameters: AuthorizationParameters, client: SignetClient, rememberedUsername: String? = nil) throws {
        self.session = answer.loginSession
        self.parameters = parameters
        self.client = client
        self.expiresIn = answer.expiresIn
        self.rememberedUsername = answer.username ?? rememberedUsername
        switch answer.nextStep {
        case .selectScenario: kind = .selectScenario(answer.scenarios ?? [])
        case .usernamePassword: kind = .usernamePassword
        case .password: kind = .password(username: self.rememberedUsername)
        case .smsCode:
            guard let sms = answer.sms else { throw SignetClientError(.invalidResponse, isRetryable: false) }
            kind = .smsCode(sms)
        case .deviceAssertion:
            // A device login's step, never an answer of the native login API.
            throw SignetClientError(.invalidResponse, isRetryable: false, reason: "the native login answered with a device login's step")
        case .finished:
            // The same checks as for a redirect: state and iss must be ours (RFC 9207).
            guard let code = answer.authorizationCode, let state = answer.state, ConstantTime.equals(state, parameters.state),
                answer.iss == client.configuration.issuer
            else { throw SignetClientError(.responseMismatch, isRetryable: false) }
            kind = .finished(NativeLoginResult(code: code, parameters: parameters, rememberToken: answer.rememberToken, client: client))
        }
    }
}

/// A finished native login: an authorization code bound like a browser code.
public struct NativeLoginResult: Sendable, Equatable {
    /// The authorization code (single use, 60 s).
    public let code: String
    /// The parameters the login started with (state, nonce, and the verifier when the app holds it).
    public let parameters: AuthorizationParameters
    /// A Remember-User-ID token, when one was asked for: keep it to skip the username next time.
    public let rememberToken: String?
    let client: SignetClient

    public static func == (lhs: NativeLoginResult, rhs: NativeLoginResult) -> Bool {
        lhs.code == rhs.code && lhs.parameters == rhs.parameters && lhs.rememberToken == rhs.rememberToken
    }

    /// Redeems the code as a public client; throws `misuse` when a backend holds the verifier
    /// (send ``code`` to the backend instead).
    public func exchange() async throws -> TokenResponse {
        try await exchangeForTokens().tokens
    }

    /// Redeems the code and checks the tokens (token type; the ID token's claims, nonce included,
    /// as ``SignetClient/exchangeCode(_:verifier:acrValues:nonce:)`` says); to keep in an `AuthState`.
    public func exchangeForTokens() async throws -> AuthTokens {
        guard let verifier = parameters.codeVerifier else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "a backend holds the PKCE verifier")
        }
        return try await client.redeem(code: code, verifier: verifier, parameters: parameters)
    }
}
