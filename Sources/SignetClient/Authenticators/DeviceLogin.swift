// Device login (MEPi biometric login): challenge(for:) → verify(…) → a code for tokens.
import Crypto
import Foundation
import SignetCore

/// What a device login starts from (MEPi's `loginInput`).
public struct DeviceLoginInput: Sendable {
    /// The authorization request (state, nonce, PKCE), made by the app or handed over by its backend.
    public var parameters: AuthorizationParameters
    /// A text the user must confirm on the authenticator (`text/plain`, at most 1000 characters).
    public var transactionText: String?

    public init(parameters: AuthorizationParameters, transactionText: String? = nil) {
        self.parameters = parameters
        self.transactionText = transactionText
    }
}

/// The provider's challenge for a device login: answer it with ``DeviceLogin/verify(_:keyID:pin:)``
/// within ``expiresIn`` seconds.
public struct DeviceLoginChallenge: Sendable {
    /// The transaction text to show, when the login confirms one.
    public let transactionText: String?
    /// The authenticators on this phone the provider accepts for it, in its order.
    public let authenticators: [StoredAuthenticator]
    public let expiresIn: Int
    let request: UAFAuthenticationRequest
    let parameters: AuthorizationParameters
}

/// Passwordless login with an activated device's authenticator, ending in the same
/// authorization code as every login (redeemed with PKCE and the device certificate).
public struct DeviceLogin: Sendable {
    public let authenticators: DeviceAuthenticators

    public init(authenticators: DeviceAuthenticators) { self.authenticators = authenticators }

    /// Starts a device login: `POST /login/device/start` over mutual TLS.
    public func challenge(for input: DeviceLoginInput) async throws -> DeviceLoginChallenge {
        let credential = try await authenticators.requireCredential()
        var body: [String: String] = [:]
        for pair in input.parameters.formParameters.pairs { body[pair.name] = pair.value }
        body["transaction_text"] = input.transactionText
        let answer: StartAnswer
        do {
            answer = try await authenticators.post(StartAnswer.self, "/login/device/start", body: body, credential: credential)
        } catch let error as SignetClientError where error.serverError?.error == .noAuthenticator {
            // The provider has none for this device (removed by the user, a helpdesk or a PIN
            // lock-out): those kept here are stale.
            for stale in try await authenticators.registered() {
                try await authenticators.devices.store { try await authenticators.keyStore.delete(keyID: stale.keyID) }
            }
            var mapped = error
            mapped.code = .authenticatorNotRegistered
            throw mapped
        }
        let request = try UAFClient.authenticationRequest(answer.uafRequest)
        let offered = request.policy.accepted.compactMap(\.first).flatMap { $0.keyIDs ?? [] }
        let kept = try await authenticators.registered()
        let usable = offered.compactMap { keyID in kept.first { $0.keyID == keyID } }
        guard !usable.isEmpty else {
            throw SignetClientError(
                .authenticatorNotRegistered, isRetryable: false, reason: "none of the provider's authenticators for this device is on this phone")
        }
        let shown = request.transaction?.first.flatMap { Data(base64URLEncoded: $0.content) }.map { String(decoding: $0, as: UTF8.self) }
        return DeviceLoginChallenge(
            transactionText: shown, authenticators: usable, expiresIn: answer.expiresIn, request: request, parameters: input.parameters)
    }

    /// Answers the challenge with an authenticator (the first usable when `keyID` is `nil`),
    /// with the PIN for a PIN authenticator; the login's result, to redeem for tokens.
    ///
    /// Showing the transaction text is the app's job: calling this confirms it.
    public func verify(_ challenge: DeviceLoginChallenge, keyID: String? = nil, pin: String? = nil) async throws -> NativeLoginResult {
        let credential = try await authenticators.requireCredential()
        guard let chosen = keyID.map({ id in challenge.authenticators.first { $0.keyID == id } }) ?? challenge.authenticators.first else {
            throw SignetClientError(.authenticatorNotRegistered, isRetryable: false, reason: "the challenge does not accept this authenticator")
        }
        let authenticator = try await authenticators.kept(chosen.keyID)
        var pinKey: P256.Signing.PrivateKey?
        if let derivation = authenticator.pin {
            guard let pin else { throw SignetClientError(.misuse, isRetryable: false, reason: "a PIN authenticator needs the PIN") }
            try authenticators.checkCoolDown(authenticator)
            pinKey = try derivation.key(for: pin)
        }
        let shown = challenge.request.transaction?.first.flatMap { Data(base64URLEncoded: $0.content) }.map { Array($0) }
        let text = try await authenticators.assertion(challenge.request, by: authenticator, pinKey: pinKey, transactionShown: shown)
        let answer: NativeLoginAnswer
        do {
            answer = try await authenticators.post(
                NativeLoginAnswer.self, "/login/device/finish", body: UAFSendResponse(uafResponse: text), credential: credential)
        } catch let error as SignetClientError {
            throw try await authenticators.settle(error, for: authenticator)
        }
        try await authenticators.resetGuard(authenticator.keyID)
        let client = authenticators.devices.client
        guard let code = answer.authorizationCode, let state = answer.state, ConstantTime.equals(state, challenge.parameters.state),
            answer.iss == client.configuration.issuer
        else { throw SignetClientError(.responseMismatch, isRetryable: false) }
        return NativeLoginResult(code: code, parameters: challenge.parameters, rememberToken: nil, client: authenticators.devices.boundClient)
    }

    private struct StartAnswer: Decodable {
        let uafRequest: UAFReturnRequest
        let expiresIn: Int
        enum CodingKeys: String, CodingKey {
            case uafRequest = "uaf_request"
            case expiresIn = "expires_in"
        }
    }
}

extension DeviceAuthenticators {
    /// Device login with these authenticators.
    public var login: DeviceLogin { DeviceLogin(authenticators: self) }
}
