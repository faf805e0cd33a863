// The SDK's FIDO UAF authenticators on an activated device: registration, PIN change, deregistration.
import Crypto
import Foundation
import SignetCore

/// The authenticators of an activated installation (docs/authenticators.md).
///
/// Every call goes over mutual TLS with the device certificate (``DeviceEnrolment``). Errors are
/// ``SignetClientError``s; those that end an authenticator (``SignetClientError/Code/authenticatorNotRegistered``,
/// ``SignetClientError/Code/authenticatorInvalidated``, ``SignetClientError/Code/pinLockedOut``,
/// ``SignetClientError/Code/authenticatorRevoked``) have forgotten it locally already, and the
/// way back is ``register(aaid:pin:options:accessToken:)``.
public struct DeviceAuthenticators: Sendable {
    public let devices: DeviceEnrolment
    public let keyStore: any AuthenticatorKeyStore
    /// This app's facet id (`ios:bundle-id:…`), which the client registration must trust.
    public let facetID: String
    /// PBKDF2 rounds for new PIN keys.
    public var pinRounds: Int

    public init(devices: DeviceEnrolment, keyStore: any AuthenticatorKeyStore, facetID: String, pinRounds: Int = PINKeyDerivation.defaultRounds) {
        self.devices = devices
        self.keyStore = keyStore
        self.facetID = facetID
        self.pinRounds = pinRounds
    }

    var uaf: UAFClient { UAFClient(facetID: facetID) }
    func now() -> Date { devices.client.now() }

    /// The authenticators kept on this phone.
    public func registered() async throws -> [StoredAuthenticator] {
        try await devices.store { try await keyStore.all() }
    }

    /// The state of a PIN authenticator's PIN, as last known.
    public func pinStatus(keyID: String) async throws -> PINStatus {
        guard let authenticator = try await registered().first(where: { $0.keyID == keyID }) else { return .lockedOut }
        return authenticator.pinGuard.status(now: now())
    }

    // MARK: registration

    /// Registers a new authenticator after a fresh login (its access token, at the client's minimum `acr`).
    ///
    /// - Parameters:
    ///   - aaid: one of ``AuthenticatorCatalog``'s; the provider's policy for this client decides.
    ///   - pin: the PIN the user chose, for a PIN authenticator (and only then).
    public func register(aaid: String, pin: String? = nil, options: AuthenticatorOptions = AuthenticatorOptions(), accessToken: String) async throws
        -> StoredAuthenticator
    {
        guard let kind = AuthenticatorCatalog.kind(aaid) else { throw SignetClientError(.misuse, isRetryable: false, reason: "unknown AAID \(aaid)") }
        guard (kind.verification == .pin) == (pin != nil) else {
            throw SignetClientError(
                .misuse, isRetryable: false,
                reason: kind.verification == .pin ? "a PIN authenticator needs a PIN" : "only a PIN authenticator takes a PIN")
        }
        let credential = try await requireCredential()
        let envelope = try await post(
            UAFReturnRequest.self, "/uaf/registration/request", body: [String: String](), credential: credential, accessToken: accessToken)
        let request = try UAFClient.registrationRequest(envelope)
        guard UAFClient.acceptedAAIDs(request.policy).contains(kind.aaid) else {
            throw SignetClientError(
                .misuse, isRetryable: false, reason: "the provider does not accept \(kind.aaid) on this device (policy, or registered already)")
        }
        let (signer, keyMaterial) = try await devices.store { try await keyStore.makeKey(aaid: kind.aaid, der: kind.usesDER, options: options) }
        var derivation: PINKeyDerivation?
        var pinKey: [UInt8]?
        if let pin {
            let (made, key) = try PINKeyDerivation.enrol(pin: pin, rounds: pinRounds)
            derivation = made
            pinKey = Array(key.publicKey.x963Representation)
        }
        let keyID = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let text = try await uaf.register(request, aaid: kind.aaid, keyID: keyID, signer: signer, pinKey: pinKey)
        _ = try await post(RegisteredAnswer.self, "/uaf/registration/response", body: UAFSendResponse(uafResponse: text), credential: credential)
        let stored = StoredAuthenticator(
            aaid: kind.aaid, keyID: Data(keyID).base64URLEncodedString(), keyMaterial: keyMaterial, der: kind.usesDER, pin: derivation,
            options: options)
        try await devices.store { try await keyStore.save(stored) }
        return stored
    }

    // MARK: PIN change

    /// Changes a PIN authenticator's PIN; the old PIN is proved to the provider, which counts a wrong one.
    public func changePIN(keyID: String, old: String, new: String) async throws {
        let credential = try await requireCredential()
        let authenticator = try await kept(keyID)
        guard let derivation = authenticator.pin else {
            throw SignetClientError(.misuse, isRetryable: false, reason: "this authenticator has no PIN")
        }
        try checkCoolDown(authenticator)
        let envelope = try await post(UAFReturnRequest.self, "/uaf/pin/change/request", body: ["key_id": keyID], credential: credential)
        let (newDerivation, newKey) = try PINKeyDerivation.enrol(pin: new, rounds: pinRounds)
        let text = try await assertion(
            try UAFClient.authenticationRequest(envelope), by: authenticator, pinKey: try derivation.key(for: old),
            newPINKey: Array(newKey.publicKey.x963Representation))
        do {
            _ = try await post(RegisteredAnswer.self, "/uaf/pin/change/response", body: UAFSendResponse(uafResponse: text), credential: credential)
        } catch let error as SignetClientError {
            throw try await settle(error, for: authenticator)
        }
        var changed = try await kept(keyID)
        changed.pin = newDerivation
        changed.pinGuard = PINGuard()
        try await devices.store { try await keyStore.save(changed) }
    }

    // MARK: deregistration

    /// Removes authenticators (all when `keyIDs` is `nil`) from the provider and from this phone.
    public func deregister(keyIDs: [String]? = nil) async throws {
        let credential = try await requireCredential()
        let envelope: UAFReturnRequest
        do {
            envelope = try await post(UAFReturnRequest.self, "/uaf/deregistration", body: DeregistrationBody(keyIDs: keyIDs), credential: credential)
        } catch let error as SignetClientError where error.serverError?.error.rawValue == "unknown_authenticator" {
            // Gone on the provider already: forget them here too.
            for keyID in keyIDs ?? [] { try await devices.store { try await keyStore.delete(keyID: keyID) } }
            return
        }
        let messages = (try? JSONDecoder().decode([UAFDeregistrationRequest].self, from: Data(envelope.uafRequest.utf8))) ?? []
        let removed = Set(messages.flatMap(\.authenticators).map(\.keyID)).union(keyIDs ?? [])
        for authenticator in try await registered() where keyIDs == nil || removed.contains(authenticator.keyID) {
            try await devices.store { try await keyStore.delete(keyID: authenticator.keyID) }
        }
    }

    // MARK: shared with DeviceLogin

    func requireCredential() async throws -> DeviceCredential {
        guard let credential = try await devices.credential() else {
            throw SignetClientError(.deviceNotActivated, isRetryable: false, reason: "activate the device first")
        }
        return credential
    }

    func kept(_ keyID: String) async throws -> StoredAuthenticator {
        guard let authenticator = try await registered().first(where: { $0.keyID == keyID }) else {
            throw SignetClientError(.authenticatorNotRegistered, isRetryable: false, reason: "no authenticator with this KeyID on this phone")
        }
        return authenticator
    }

    /// Refuses at once while the PIN's cool-down runs, as the provider would.
    func checkCoolDown(_ authenticator: StoredAuthenticator) throws {
        if let wait = authenticator.pinGuard.wait(now: now()) {
            throw SignetClientError(.pinCoolingDown, isRetryable: true, retryAfter: Int(wait.rounded(.up)), reason: "too many wrong PINs")
        }
    }

    /// An authentication response by `authenticator`; its counter is advanced and kept first, so
    /// it grows even when the answer never arrives.
    func assertion(
        _ request: UAFAuthenticationRequest, by authenticator: StoredAuthenticator, pinKey: P256.Signing.PrivateKey?, newPINKey: [UInt8]? = nil,
        transactionShown: [UInt8]? = nil
    ) async throws -> String {
        let signer: any UAFSigner
        do {
            signer = try await keyStore.signer(for: authenticator, reason: "Sign in")
        } catch let error as SignetClientError where error.code == .authenticatorInvalidated {
            try await forget(authenticator, onProvider: true)
            throw error
        }
        if authenticator.pin != nil, pinKey == nil {
            throw SignetClientError(.misuse, isRetryable: false, reason: "a PIN authenticator needs the PIN")
        }
        let advanced = try await devices.store { try await keyStore.advanceCounter(keyID: authenticator.keyID) }
        guard let keyID = Data(base64URLEncoded: authenticator.keyID) else { throw SignetClientError(.deviceKeyUnavailable, isRetryable: false) }
        return try await uaf.authenticate(
            request, aaid: authenticator.aaid, keyID: Array(keyID), signer: signer, signCounter: advanced.signCounter,
            transactionShown: transactionShown,
            pinKey: pinKey, newPINKey: newPINKey)
    }

    /// Turns the provider's refusal of `authenticator`'s assertion into the SDK's error, keeping
    /// the PIN schedule in step and forgetting an authenticator the provider no longer has.
    func settle(_ error: SignetClientError, for authenticator: StoredAuthenticator) async throws -> SignetClientError {
        var mapped = error
        switch error.serverError?.error.rawValue {
        case "wrong_pin":
            mapped.code = .wrongPIN
            mapped.isRetryable = true
            try await updateGuard(authenticator.keyID) {
                $0.sync(remaining: error.attemptsLeft, coolDown: error.retryAfter.map(TimeInterval.init), now: now())
            }
        case "pin_cool_down":
            mapped.code = .pinCoolingDown
            mapped.isRetryable = true
            try await updateGuard(authenticator.keyID) { $0.sync(remaining: nil, coolDown: error.retryAfter.map(TimeInterval.init), now: now()) }
        case "pin_locked_out":
            mapped.code = .pinLockedOut
            try await forget(authenticator, onProvider: false)
        case "unknown_authenticator", "no_authenticator":
            mapped.code = .authenticatorNotRegistered
            try await forget(authenticator, onProvider: false)
        case "authenticator_revoked":
            mapped.code = .authenticatorRevoked
            try await forget(authenticator, onProvider: true)
        default:
            break
        }
        return mapped
    }

    func resetGuard(_ keyID: String) async throws {
        try await updateGuard(keyID) { $0.reset() }
    }

    private func updateGuard(_ keyID: String, _ change: (inout PINGuard) -> Void) async throws {
        guard var authenticator = try await registered().first(where: { $0.keyID == keyID }) else { return }
        change(&authenticator.pinGuard)
        try await devices.store { try await keyStore.save(authenticator) }
    }

    /// Forgets an authenticator here, and on the provider when it may still be there.
    private func forget(_ authenticator: StoredAuthenticator, onProvider: Bool) async throws {
        if onProvider, let credential = try? await requireCredential() {
            _ = try? await post(
                UAFReturnRequest.self, "/uaf/deregistration", body: DeregistrationBody(keyIDs: [authenticator.keyID]), credential: credential)
        }
        try await devices.store { try await keyStore.delete(keyID: authenticator.keyID) }
    }

    /// POSTs JSON over mutual TLS and decodes the answer; the provider's errors as ``SignetClientError``,
    /// with the PIN's remaining tries in ``SignetClientError/attemptsLeft``.
    func post<Answer: Decodable>(_ type: Answer.Type, _ path: String, body: some Encodable, credential: DeviceCredential, accessToken: String? = nil)
        async throws
        -> Answer
    {
        let request = HTTPTransportRequest(
            method: "POST", url: try devices.endpoint(path), headers: DeviceEnrolment.jsonHeaders, body: try DeviceEnrolment.json(body))
        let response = try await devices.send(request, presenting: credential, accessToken: accessToken)
        if !response.isSuccess {
            var error = SignetClientError.from(response)
            if let pin = try? JSONDecoder().decode(PINErrorBody.self, from: response.body).pin {
                error.attemptsLeft = pin.remainingTries ?? error.attemptsLeft
            }
            throw error
        }
        return try devices.decode(Answer.self, from: response)
    }

    struct RegisteredAnswer: Decodable {}

    private struct DeregistrationBody: Encodable {
        let keyIDs: [String]?
        enum CodingKeys: String, CodingKey { case keyIDs = "key_ids" }
    }

    private struct PINErrorBody: Decodable {
        struct PIN: Decodable {
            let remainingTries: Int?
            enum CodingKeys: String, CodingKey { case remainingTries = "remaining_tries" }
        }
        let pin: PIN?
    }
}

extension DeviceEnrolment {
    /// The device's FIDO UAF authenticators, kept in `keyStore`, for the app whose facet id is `facetID`.
    public func authenticators(keyStore: any AuthenticatorKeyStore, facetID: String, pinRounds: Int = PINKeyDerivation.defaultRounds)
        -> DeviceAuthenticators
    {
        DeviceAuthenticators(devices: self, keyStore: keyStore, facetID: facetID, pinRounds: pinRounds)
    }
}
