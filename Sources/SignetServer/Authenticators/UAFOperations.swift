// The UAF operations on an activated device: the one place authenticators touch storage.
import Crypto
import Foundation
import SignetCore
import SignetStore

/// Makes UAF requests and carries out registration, authentication (with the server-guarded
/// PIN) and deregistration for a device that proved itself over mutual TLS.
///
/// Order of a response's checks, as the UAF status table and the FIDO conformance tests have
/// it: the challenge first (serverData sealed here, live, for this device and purpose), which
/// is then spent (one statement, so of parallel answers exactly one goes on, and a replay is
/// 1491 whatever else it holds); then the rest of the envelope (fcParams), the assertion and its
/// signature, the user's security stamp, the counter, then the PIN (counted only when no
/// cool-down runs, in the same statement that checks it). A refused response has spent its
/// challenge: the app asks for a new request.
struct UAFOperations: Sendable {
    let server: ServerContext
    let users: any UserStore
    let authenticators: any AuthenticatorStore
    /// Where each answered challenge is recorded, so it is answered once.
    let replays: any ReplayStore
    let lifecycle: DeviceLifecycle
    /// The key `serverData` is sealed with (``ServerKeys/uaf``).
    let uafKey: SymmetricKey
    let authenticatorPolicy: AuthenticatorPolicy

    var policy: AuthenticatorPolicy { authenticatorPolicy }
    var seal: UAFServerDataSeal { UAFServerDataSeal(key: uafKey) }

    func appID(_ client: ClientRecord) -> String { UAFAppID.of(clientID: client.id, issuer: server.issuer) }

    // MARK: requests

    /// A registration request for the device's user, accepting the client's AAIDs not yet registered
    /// on it; `acr` is the registering login's, which the authenticator's logins will not exceed.
    func registrationRequest(device: DeviceRecord, client: ClientRecord, acr: String) async throws -> UAFReturnRequest {
        guard let user = try await users.user(id: device.userID), !user.locked else {
            throw OAuthHTTPError(.forbidden, .accessDenied, "the device's user is locked or gone")
        }
        let existing = try await current(device, stamp: user.securityStamp)
        guard existing.count < policy.maximumPerDevice else { throw UAFHTTPError(refusal: .deviceFull(maximum: policy.maximumPerDevice)) }
        let registered = Set(existing.map(\.aaid))
        let accepted = AuthenticatorCatalog.accepted(by: client).filter { !registered.contains($0) }
        guard !accepted.isEmpty else {
            throw UAFHTTPError(
                refusal: .unacceptable(
                    "every authenticator this client accepts is registered on the device already", uafStatus: .unacceptableAuthenticator))
        }
        let (challenge, serverData) = try makeServerData(.register, device: device) {
            $0.registrationACR = acr
            $0.userStamp = Self.stampDigest(user.securityStamp)
        }
        let username = user.username
        let request = UAFRegistrationRequest(
            header: UAFHeader(op: .registration, appID: appID(client), serverData: serverData), challenge: challenge, username: username,
            policy: UAFPolicy(
                accepted: accepted.map { [UAFMatchCriteria(aaid: [$0])] },
                disallowed: existing.isEmpty ? nil : existing.map { UAFMatchCriteria(aaid: [$0.aaid], keyIDs: [$0.keyID]) }))
        return try envelope([request], op: .registration)
    }

    /// An authentication request for the device's authenticators the client accepts (or only
    /// `authenticator`); with `twoFactors`, only those registered after a two-factor login.
    /// `user` is the device's user when the caller has read it already.
    func authenticationRequest(
        device: DeviceRecord, client: ClientRecord, purpose: UAFServerData.Purpose, loginSession: String? = nil,
        authenticator: AuthenticatorRecord? = nil,
        transactionText: String? = nil, twoFactors: Bool = false, user: UserRecord? = nil
    ) async throws -> UAFReturnRequest {
        let accepted = Set(AuthenticatorCatalog.accepted(by: client))
        let owner: UserRecord?
        if let user { owner = user } else { owner = try await users.user(id: device.userID) }
        let stamp = owner?.securityStamp
        var usable: [AuthenticatorRecord] = []
        for candidate in try await current(device, stamp: stamp) {
            guard accepted.contains(candidate.aaid), candidate.cloneSuspectedAt == nil, authenticator == nil || candidate.id == authenticator?.id
            else { continue }
            guard !twoFactors || candidate.assertsTwoFactors else { continue }
            usable.append(candidate)
        }
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

    /// The device's authenticators, after removing those registered before the user's last new
    /// password or lock (their stamp): gone for good, so they neither log in nor hold a slot.
    private func current(_ device: DeviceRecord, stamp: String?) async throws -> [AuthenticatorRecord] {
        var current: [AuthenticatorRecord] = []
        for candidate in try await authenticators.authenticators(instanceID: device.instanceID) {
            guard candidate.userStamp == stamp else {
                _ = try await remove(
                    candidate, device: device, by: .device,
                    note: "\(candidate.aaid): the password changed or the account was locked since it was registered")
                continue
            }
            current.append(candidate)
        }
        return current
    }

    private func makeServerData(
        _ purpose: UAFServerData.Purpose, device: DeviceRecord, _ adjust: (inout UAFServerData) -> Void = { _ in }
    ) throws -> (challenge: String, sealed: String) {
        let challenge = server.random.token()
        var data = UAFServerData(
            purpose: purpose, challenge: challenge, userID: device.userID, instanceID: device.instanceID, clientID: device.clientID,
            expiresAt: Int(server.now().addingTimeInterval(policy.requestLifetime).timeIntervalSince1970))
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
        let response = try await checkedAndSpent(body, device: device, client: client, operation: .registration, purposes: [.register])
        let verified = try result(UAFRegistrationCheck(accepted: AuthenticatorCatalog.accepted(by: client)).verify(response))
        // The user as the registering login knew them: a new password or a lock since voids the request.
        guard let user = try await users.user(id: device.userID), !user.locked,
            response.serverData.userStamp == Self.stampDigest(user.securityStamp)
        else { throw UAFHTTPError(refusal: .serverData("the account changed (new password or lock) since the registration request")) }
        // The store's unique indexes decide a race between two registrations (below).
        let keyID = Data(verified.data.keyID).base64URLEncodedString()
        if try await authenticators.authenticator(userID: device.userID, keyID: keyID) != nil { throw UAFHTTPError(refusal: .duplicateKey) }
        if try await current(device, stamp: user.securityStamp).contains(where: { $0.aaid == verified.kind.aaid }) {
            throw UAFHTTPError(
                refusal: .unacceptable("\(verified.kind.aaid) is registered on this device already", uafStatus: .unacceptableAuthenticator))
        }
        let record = AuthenticatorRecord(
            id: server.random.token(byteCount: 16), userID: device.userID, instanceID: device.instanceID, clientID: device.clientID,
            aaid: verified.kind.aaid, keyID: keyID, publicKey: Data(verified.data.publicKey).base64URLEncodedString(),
            signatureAlgorithm: verified.data.signatureAlgorithm.rawValue, publicKeyFormat: verified.data.publicKeyFormat.rawValue, slot: 0,
            signCounter: verified.data.signCounter, registrationCounter: verified.data.registrationCounter,
            pinKey: verified.pinKey.map { Data($0).base64URLEncodedString() }, createdAt: server.now())
        var stamped = record
        stamped.userStamp = user.securityStamp
        stamped.registrationACR = response.serverData.registrationACR ?? AuthorizationRequestValidator.acrOneFactor
        let stored: AuthenticatorRecord?
        do { stored = try await authenticators.insertAuthenticator(stamped, maximumPerDevice: policy.maximumPerDevice) } catch let error
            as SignetError
            where error.code == .conflict
        {
            // A KeyID or AAID taken by a registration racing this one.
            throw UAFHTTPError(refusal: .duplicateKey)
        }
        guard let stored else { throw UAFHTTPError(refusal: .deviceFull(maximum: policy.maximumPerDevice)) }
        try await lifecycle.record("authenticator.registered", device: device, by: .device, note: "\(stored.aaid) \(verified.kind.name)")
        return stored
    }

    /// Checks an authentication response from start to end, PIN included; what it proved.
    func authenticate(_ body: Data, device: DeviceRecord, client: ClientRecord, purposes: Set<UAFServerData.Purpose>) async throws
        -> AuthenticatedAssertion
    {
        let response = try await checkedAndSpent(body, device: device, client: client, operation: .authentication, purposes: purposes)
        let assertion = try result(UAFAuthenticationCheck.read(response))
        let record = try await authenticators.authenticator(userID: device.userID, keyID: Data(assertion.signedData.keyID).base64URLEncodedString())
        let verified = try result(
            UAFAuthenticationCheck(accepted: AuthenticatorCatalog.accepted(by: client)).verify(
                assertion, by: record, device: device, response: response))
        let authenticator = verified.authenticator
        let now = server.now()
        // Registered before a new password or a lock: it ends here (a password thief's enrolment
        // does not outlive the new password).
        guard authenticator.userStamp == (try await users.user(id: device.userID)?.securityStamp) else {
            _ = try await remove(
                authenticator, device: device, by: .device,
                note: "\(authenticator.aaid): the password changed or the account was locked since it was registered")
            throw UAFHTTPError(refusal: .unknownAuthenticator)
        }
        // A cool-down checks nothing more: no PIN is counted while it runs.
        if let until = authenticator.pinBlockedUntil, until > now {
            throw UAFHTTPError(refusal: .pinCoolingDown(retryAfter: Self.wait(until: until, now: now)))
        }
        switch try await authenticators.recordAuthenticatorUse(id: authenticator.id, signCounter: verified.signedData.signCounter, at: now) {
        case .accepted: break
        case .unknown: throw UAFHTTPError(refusal: .unknownAuthenticator)
        case .regressed:
            // Whoever answers holds this device's TLS key too: the device itself is suspect, so it is
            // locked (its certificate, grants and tokens end), not only the authenticator.
            try await lifecycle.record("authenticator.clone_suspected", device: device, by: .device, note: authenticator.aaid)
            try await lifecycle.revoke(
                instanceID: device.instanceID, because: .locked, by: .device,
                note: "\(authenticator.aaid): its signature counter did not increase (possibly cloned)")
            throw UAFHTTPError(refusal: .cloned)
        }
        if let proof = verified.pinProof, let pinKey = authenticator.pinKey {
            try await checkPIN(proof, pinKey: pinKey, authenticator: authenticator, signedData: verified.signedData, device: device, now: now)
        }
        if let newKey = verified.newPINKey {
            guard let oldKey = authenticator.pinKey,
                try await authenticators.replacePINKey(id: authenticator.id, from: oldKey, to: Data(newKey).base64URLEncodedString())
            else {
                throw UAFHTTPError(refusal: .unknownAuthenticator)
            }
            try await lifecycle.record("authenticator.pin_changed", device: device, by: .device, note: authenticator.aaid)
        }
        return AuthenticatedAssertion(
            authenticator: authenticator, serverData: response.serverData, signedData: verified.signedData,
            deviceAttested: AttestationResult.hardwareKeyKinds.contains(device.attestation))
    }

    /// Checks the PIN proof against the schedule: a right one resets the count, a wrong one is
    /// counted (and the last allowed removes the authenticator). Both statements apply only
    /// while no cool-down runs and the PIN key is the one checked; when either is not applied the
    /// answer comes from the state alone (``notApplied(_:now:)``), the same for a right and a
    /// wrong PIN, so nothing is learnt about the guess.
    private func checkPIN(
        _ proof: [UInt8], pinKey: String, authenticator: AuthenticatorRecord, signedData: UAFSignedData, device: DeviceRecord, now: Date
    ) async throws {
        let right =
            Data(base64URLEncoded: pinKey).map {
                UAFPINProof.isValid(proof, publicKey: Array($0), finalChallengeHash: signedData.finalChallengeHash, keyID: signedData.keyID)
            } ?? false
        if right {
            if try await authenticators.acceptPIN(id: authenticator.id, pinKey: pinKey, at: now, maximumFailures: policy.pinMaximumFailures) {
                return
            }
            throw UAFHTTPError(refusal: try await notApplied(authenticator, now: now))
        }
        switch try await authenticators.recordPINFailure(id: authenticator.id, pinKey: pinKey, at: now, coolDowns: policy.pinCoolDowns) {
        case .coolingDown:
            throw UAFHTTPError(refusal: try await notApplied(authenticator, now: now))
        case .counted(let failures, let blockedUntil):
            if failures >= policy.pinMaximumFailures {
                if let removed = try await authenticators.deleteAuthenticator(id: authenticator.id) {
                    try await lifecycle.record("authenticator.pin_locked_out", device: device, by: .device, note: removed.aaid)
                }
                throw UAFHTTPError(refusal: .pinLockedOut)
            }
            // The schedule's own wait, not the stored time less now (stored to the millisecond).
            throw UAFHTTPError(
                refusal: .wrongPIN(
                    remaining: policy.pinMaximumFailures - failures, retryAfter: blockedUntil.map { _ in policy.coolDown(after: failures) }))
        }
    }

    /// Why a PIN statement did not apply, read from the authenticator as it is now: gone (or its
    /// PIN changed meanwhile), cooling down, or locked out.
    private func notApplied(_ authenticator: AuthenticatorRecord, now: Date) async throws -> UAFRefusal {
        guard let current = try await authenticators.authenticator(id: authenticator.id), current.pinKey == authenticator.pinKey else {
            return .unknownAuthenticator
        }
        if let until = current.pinBlockedUntil, until > now { return .pinCoolingDown(retryAfter: Self.wait(until: until, now: now)) }
        return current.pinFailures >= policy.pinMaximumFailures ? .pinLockedOut : .unknownAuthenticator
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
        let all = try await authenticators.authenticators(instanceID: device.instanceID)
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
    func remove(_ authenticator: AuthenticatorRecord, device: DeviceRecord, by actor: DeviceActor, note: String? = nil) async throws
        -> AuthenticatorRecord?
    {
        guard let removed = try await authenticators.deleteAuthenticator(id: authenticator.id) else { return nil }
        try await lifecycle.record("authenticator.removed", device: device, by: actor, note: note ?? removed.aaid)
        return removed
    }

    // MARK: shared

    /// The response's challenge checked and spent, then the rest of its envelope checked.
    private func checkedAndSpent(
        _ body: Data, device: DeviceRecord, client: ClientRecord, operation: UAFOperation, purposes: Set<UAFServerData.Purpose>
    ) async throws -> CheckedUAFResponse {
        let envelope = UAFResponseEnvelope(seal: seal, device: device, client: client, appID: appID(client), now: server.now())
        let challenged = try result(envelope.challenge(body, purposes: purposes))
        try await spend(challenged.serverData)
        return try result(envelope.check(challenged, operation: operation))
    }

    /// Spends the request's challenge: exactly one of concurrent answers passes. The record is
    /// kept a lifetime past the request's expiry, so no answer checked just before the expiry can
    /// pass again once the row is cleaned up.
    private func spend(_ serverData: UAFServerData) async throws {
        let key = "uaf-challenge:" + SecretDigest.hex(serverData.challenge)
        let expires = Date(timeIntervalSince1970: TimeInterval(serverData.expiresAt)).addingTimeInterval(policy.requestLifetime)
        guard try await replays.recordOnce(key: key, expiresAt: expires, now: server.now()) else { throw UAFHTTPError(refusal: .replayed) }
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
    /// Whether the device key was attested (hardware); otherwise it may be a software key.
    let deviceAttested: Bool

    /// RFC 8176 `amr` of a device login: the device key (`hwk` when attested as hardware, else
    /// `swk`), how the user was verified (as the authenticator's AAID says: surrogate attestation
    /// cannot prove it), and `mfa` only when the authenticator asserts two factors (relying parties
    /// check `mfa` as often as `acr`).
    var amr: [String] {
        let verification = AuthenticatorCatalog.kind(authenticator.aaid)?.verification.amr ?? ["user"]
        return [deviceAttested ? "hwk" : "swk"] + verification + (authenticator.assertsTwoFactors ? ["mfa"] : [])
    }

    /// The login's `acr`: two factors only when the authenticator was registered after a two-factor login.
    var acr: String { authenticator.assertsTwoFactors ? AuthorizationRequestValidator.acrTwoFactors : AuthorizationRequestValidator.acrOneFactor }
}

extension AuthenticatorRecord {
    /// Whether its logins may assert two factors: it was registered after a two-factor login, so
    /// a password alone could not have enrolled it.
    var assertsTwoFactors: Bool { registrationACR == AuthorizationRequestValidator.acrTwoFactors }
}

extension UAFOperations {
    /// What serverData carries of a security stamp: a digest, not the stamp itself.
    static func stampDigest(_ stamp: String?) -> String { String(SecretDigest.hex("signet-stamp:" + (stamp ?? "")).prefix(32)) }
}
