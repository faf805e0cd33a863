// The UAF operations on an activated device: the one place authenticators touch storage.
import Crypto
import Foundation
import SignetCore

/// Makes UAF requests and carries out registration, authentication (with the server-guarded
/// PIN) and deregistration for a device that proved itself over mutual TLS.
///
/// Order of a response's checks: the envelope (serverData, fcParams), the assertion and its
/// signature, then the challenge is spent (one statement, so of parallel answers exactly one
/// goes on), then the counter, then the PIN (counted only when no cool-down runs, in the same
/// statement that checks it). Nothing is stored for a response that fails before the spend.
struct UAFOperations: Sendable {
    let provider: Provider
    let lifecycle: DeviceLifecycle

    var policy: AuthenticatorPolicy { provider.configuration.authenticators }
    var seal: UAFServerDataSeal { UAFServerDataSeal(key: provider.uafKey) }

    func appID(_ client: ClientRecord) -> String { UAFAppID.of(clientID: client.id, issuer: provider.issuer) }

    // MARK: requests

    /// A registration request for the device's user, accepting the client's AAIDs not yet registered on it.
    func registrationRequest(device: DeviceRecord, client: ClientRecord) async throws -> UAFReturnRequest {
        let existing = try await provider.store.authenticators(instanceID: device.instanceID)
        guard existing.count < policy.maximumPerDevice else { throw UAFHTTPError(refusal: .deviceFull(maximum: policy.maximumPerDevice)) }
        let registered = Set(existing.map(\.aaid))
        let accepted = AuthenticatorCatalog.accepted(by: client).filter { !registered.contains($0) }
        guard !accepted.isEmpty else {
            throw UAFHTTPError(refusal: .unacceptable("every authenticator this client accepts is registered on the device already", uafStatus: .unacceptableAuthenticator))
        }
        let username = try await provider.store.user(id: device.userID)?.username ?? device.userID
        let (challenge, serverData) = try makeServerData(.register, device: device)
        let request = UAFRegistrationRequest(
            header: UAFHeader(op: .registration, appID: appID(client), serverData: serverData), challenge: challenge, username: username,
            policy: UAFPolicy(
                accepted: accepted.map { [UAFMatchCriteria(aaid: [$0])] },
                disallowed: existing.isEmpty ? nil : existing.map { UAFMatchCriteria(aaid: [$0.aaid], keyIDs: [$0.keyID]) }))
        return try envelope([request], op: .registration)
    }

    /// An authentication request for the device's authenticators the client accepts (or only `authenticator`).
    func authenticationRequest(
        device: DeviceRecord, client: ClientRecord, purpose: UAFServerData.Purpose, loginSession: String? = nil, authenticator: AuthenticatorRecord? = nil,
        transactionText: String? = nil
    ) async throws -> UAFReturnRequest {
        let accepted = Set(AuthenticatorCatalog.accepted(by: client))
        let usable = try await provider.store.authenticators(instanceID: device.instanceID)
            .filter { accepted.contains($0.aaid) && $0.cloneSuspectedAt == nil && (authenticator == nil || $0.id == authenticator?.id) }
        guard !usable.isEmpty else { throw UAFHTTPError(refusal: .noAuthenticator) }
        let (challenge, serverData) = try makeServerData(purpose, device: device) {
            $0.loginSession = loginSession
            $0.authenticatorID = authenticator?.id
            $0.transactionHash = transactionText.map(UAFAuthenticationCheck.transactionHash)
        }
        let transaction = transactionText.map { [UAFTransaction(contentType: "text/plain", content: Data($0.utf8).base64URLEncodedString())] }
        let request = UAFAuthenticationRequest(
            header: UAFHeader(op: .authentication, appID: appID(client), serverData: serverData), challenge: challenge, transaction: transaction,
            policy: UAFPolicy(accepted: usable.map { [UAFMatchCriteria(aaid: [$0.aaid], keyIDs: [$0.keyID])] }))
        return try envelope([request], op: .authentication)
    }

    private func makeServerData(
        _ purpose: UAFServerData.Purpose, device: DeviceRecord, _ adjust: (inout UAFServerData) -> Void = { _ in }
    ) throws -> (challenge: String, sealed: String) {
        let challenge = provider.random.token()
        var data = UAFServerData(
            purpose: purpose, challenge: challenge, userID: device.userID, instanceID: device.instanceID, clientID: device.clientID,
            expiresAt: Int(provider.now().addingTimeInterval(policy.requestLifetime).timeIntervalSince1970))
        adjust(&data)
        return (challenge, try seal.seal(data))
    }

    private func envelope<Request: Encodable>(_ requests: [Request], op: UAFOperation) throws -> UAFReturnRequest {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(requests), as: UTF8.self)
        return UAFReturnRequest(uafRequest: text, op: op, lifetimeMillis: Int(policy.requestLifetime * 1000))
    }

    // MARK: responses

    /// Checks a registration response and stores the authenticator; the user is told.
    func register(_ body: Data, device: DeviceRecord, client: ClientRecord) async throws -> AuthenticatorRecord {
        let response = try checked(body, device: device, client: client, operation: .registration, purposes: [.register])
        let verified = try result(UAFRegistrationCheck(accepted: AuthenticatorCatalog.accepted(by: client)).verify(response))
        let keyID = Data(verified.data.keyID).base64URLEncodedString()
        if try await provider.store.authenticator(userID: device.userID, keyID: keyID) != nil { throw UAFHTTPError(refusal: .duplicateKey) }
        try await spend(response.serverData)
        let record = AuthenticatorRecord(
            id: provider.random.token(byteCount: 16), userID: device.userID, instanceID: device.instanceID, clientID: device.clientID,
            aaid: verified.kind.aaid, keyID: keyID, publicKey: Data(verified.data.publicKey).base64URLEncodedString(),
            signatureAlgorithm: verified.data.signatureAlgorithm.rawValue, publicKeyFormat: verified.data.publicKeyFormat.rawValue, slot: 0,
            signCounter: verified.data.signCounter, registrationCounter: verified.data.registrationCounter,
            pinKey: verified.pinKey.map { Data($0).base64URLEncodedString() }, createdAt: provider.now())
        let stored: AuthenticatorRecord?
        do { stored = try await provider.store.insertAuthenticator(record, maximumPerDevice: policy.maximumPerDevice) } catch let error as SignetError
            where error.code == .conflict
        {
            throw UAFHTTPError(refusal: .duplicateKey)
        }
        guard let stored else { throw UAFHTTPError(refusal: .deviceFull(maximum: policy.maximumPerDevice)) }
        try await lifecycle.record("authenticator.registered", device: device, by: .device, note: "\(stored.aaid) \(verified.kind.name)")
        return stored
    }

    /// Checks an authentication response from start to end, PIN included; what it proved.
    func authenticate(_ body: Data, device: DeviceRecord, client: ClientRecord, purposes: Set<UAFServerData.Purpose>) async throws -> AuthenticatedAssertion {
        let response = try checked(body, device: device, client: client, operation: .authentication, purposes: purposes)
        let assertion = try result(UAFAuthenticationCheck.read(response))
        let record = try await provider.store.authenticator(userID: device.userID, keyID: Data(assertion.signedData.keyID).base64URLEncodedString())
        let verified = try result(
            UAFAuthenticationCheck(accepted: AuthenticatorCatalog.accepted(by: client)).verify(assertion, by: record, device: device, response: response))
        let authenticator = verified.authenticator
        // A cool-down answers before anything is spent: the app may retry the same request after it.
        if let until = authenticator.pinBlockedUntil, until > provider.now() {
            throw UAFHTTPError(refusal: .pinCoolingDown(retryAfter: Self.wait(until: until, now: provider.now())))
        }
        try await spend(response.serverData)
        switch try await provider.store.recordAuthenticatorUse(id: authenticator.id, signCounter: verified.signedData.signCounter, at: provider.now()) {
        case .accepted: break
        case .unknown: throw UAFHTTPError(refusal: .unknownAuthenticator)
        case .regressed:
            try await lifecycle.record("authenticator.clone_suspected", device: device, by: .device, note: authenticator.aaid)
            throw UAFHTTPError(refusal: .cloned)
        }
        if let proof = verified.pinProof, let pinKey = authenticator.pinKey {
            try await checkPIN(proof, pinKey: pinKey, authenticator: authenticator, signedData: verified.signedData, device: device)
        }
        if let newKey = verified.newPINKey {
            guard try await provider.store.replacePINKey(id: authenticator.id, pinKey: Data(newKey).base64URLEncodedString()) else {
                throw UAFHTTPError(refusal: .unknownAuthenticator)
            }
            try await lifecycle.record("authenticator.pin_changed", device: device, by: .device, note: authenticator.aaid)
        }
        return AuthenticatedAssertion(authenticator: authenticator, serverData: response.serverData, signedData: verified.signedData)
    }

    /// Checks the PIN proof against the schedule: a right one resets the count, a wrong one is
    /// counted (and the last allowed removes the authenticator); during a cool-down neither is
    /// checked, so the answer says nothing about the guess.
    private func checkPIN(_ proof: [UInt8], pinKey: String, authenticator: AuthenticatorRecord, signedData: UAFSignedData, device: DeviceRecord) async throws {
        let now = provider.now()
        let right = Data(base64URLEncoded: pinKey).map {
            UAFPINProof.isValid(proof, publicKey: Array($0), finalChallengeHash: signedData.finalChallengeHash, keyID: signedData.keyID)
        } ?? false
        if right {
            if try await provider.store.acceptPIN(id: authenticator.id, at: now, maximumFailures: policy.pinMaximumFailures) { return }
            let until = try await provider.store.authenticator(id: authenticator.id)?.pinBlockedUntil
            throw UAFHTTPError(refusal: until.map { .pinCoolingDown(retryAfter: Self.wait(until: $0, now: now)) } ?? .pinLockedOut)
        }
        switch try await provider.store.recordPINFailure(id: authenticator.id, at: now, coolDowns: policy.pinCoolDowns) {
        case .coolingDown(let until):
            throw UAFHTTPError(refusal: until.map { .pinCoolingDown(retryAfter: Self.wait(until: $0, now: now)) } ?? .unknownAuthenticator)
        case .counted(let failures, let blockedUntil):
            if failures >= policy.pinMaximumFailures {
                if let removed = try await provider.store.deleteAuthenticator(id: authenticator.id) {
                    try await lifecycle.record("authenticator.pin_locked_out", device: device, by: .device, note: removed.aaid)
                }
                throw UAFHTTPError(refusal: .pinLockedOut)
            }
            // The schedule's own wait, not the stored time less now (stored to the millisecond).
            throw UAFHTTPError(refusal: .wrongPIN(remaining: policy.pinMaximumFailures - failures, retryAfter: blockedUntil.map { _ in policy.coolDown(after: failures) }))
        }
    }

    /// Whole seconds until `until`, at least one (times are stored to the millisecond, so a
    /// sliver over a whole second is not another second).
    static func wait(until: Date, now: Date) -> TimeInterval {
        max(1, (until.timeIntervalSince(now) - 0.001).rounded(.up))
    }

    // MARK: deregistration

    /// Removes authenticators (all of the device's when `keyIDs` is `nil`) and returns the
    /// deregistration request that tells the app to forget their keys (UAF Protocol §3.6).
    func deregister(device: DeviceRecord, client: ClientRecord, keyIDs: [String]?, by actor: DeviceActor) async throws -> UAFDeregistrationRequest {
        let all = try await provider.store.authenticators(instanceID: device.instanceID)
        let chosen = keyIDs.map { wanted in all.filter { wanted.contains($0.keyID) } } ?? all
        if let keyIDs, chosen.count != Set(keyIDs).count { throw UAFHTTPError(refusal: .unknownAuthenticator) }
        var removed: [AuthenticatorRecord] = []
        for authenticator in chosen {
            if let gone = try await remove(authenticator, device: device, by: actor) { removed.append(gone) }
        }
        return UAFDeregistrationRequest(
            header: UAFHeader(op: .deregistration, appID: appID(client), serverData: nil),
            authenticators: removed.map { UAFDeregisterAuthenticator(aaid: $0.aaid, keyID: $0.keyID) })
    }

    /// Removes one authenticator and records it; `nil` when someone removed it first.
    func remove(_ authenticator: AuthenticatorRecord, device: DeviceRecord, by actor: DeviceActor, note: String? = nil) async throws -> AuthenticatorRecord? {
        guard let removed = try await provider.store.deleteAuthenticator(id: authenticator.id) else { return nil }
        try await lifecycle.record("authenticator.removed", device: device, by: actor, note: note ?? removed.aaid)
        return removed
    }

    // MARK: shared

    private func checked(_ body: Data, device: DeviceRecord, client: ClientRecord, operation: UAFOperation, purposes: Set<UAFServerData.Purpose>) throws -> CheckedUAFResponse {
        try result(UAFResponseEnvelope(seal: seal, device: device, client: client, appID: appID(client), now: provider.now()).check(body, operation: operation, purposes: purposes))
    }

    /// Spends the request's challenge: exactly one of concurrent answers passes.
    private func spend(_ serverData: UAFServerData) async throws {
        let key = "uaf-challenge:" + SecretDigest.hex(serverData.challenge)
        let expires = Date(timeIntervalSince1970: TimeInterval(serverData.expiresAt))
        guard try await provider.store.recordOnce(key: key, expiresAt: expires, now: provider.now()) else { throw UAFHTTPError(refusal: .replayed) }
    }

    private func result<Value>(_ decision: Result<Value, UAFRefusal>) throws -> Value {
        switch decision {
        case .success(let value): return value
        case .failure(let refusal): throw UAFHTTPError(refusal: refusal)
        }
    }
}

/// What an authentication proved: the authenticator (as it was read) and the request it answered.
struct AuthenticatedAssertion: Sendable {
    let authenticator: AuthenticatorRecord
    let serverData: UAFServerData
    let signedData: UAFSignedData

    /// RFC 8176 `amr` of a device login: the device key, how the user was verified, and `mfa`.
    var amr: [String] {
        let verification = AuthenticatorCatalog.kind(authenticator.aaid)?.verification.amr ?? ["user"]
        return ["hwk"] + verification + ["mfa"]
    }
}
