// A store that can hold one login write, so a test can interleave requests deterministically.
import Foundation
import SignetCore
import SignetServer
import SignetStore
import Synchronization

/// Holds the next armed login write until released.
final class LoginWriteGate: Sendable {
    private struct State {
        var armed = false
        var paused = false
        var released = false
        var held: CheckedContinuation<Void, Never>?
        var watchers: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// The next login write waits (after its request has read the login) until ``release()``.
    func arm() { state.withLock { $0.armed = true } }

    /// Returns once an armed write is waiting.
    func waitUntilPaused() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.paused { return true }
                state.watchers.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func release() {
        let held = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.released = true
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }

    /// Called by the store before each login write.
    func pass() async {
        let hold = state.withLock { state -> Bool in
            guard state.armed else { return false }
            state.armed = false
            state.paused = true
            for watcher in state.watchers { watcher.resume() }
            state.watchers = []
            return true
        }
        guard hold else { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.released { return true }
                state.held = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// An on/off switch tests flip while requests run.
final class TestSwitch: Sendable {
    private let state = Mutex(false)
    var isOn: Bool { state.withLock { $0 } }
    func set(_ on: Bool) { state.withLock { $0 = on } }
}

/// A ``MemoryStore`` whose login writes pass through a ``LoginWriteGate``, whose device
/// inserts can be made to fail (a database that goes away mid-activation), and whose grants can
/// be made unreadable (a row that no longer decodes).
struct GatedStore: SignetStore {
    let base: any SignetStore = MemoryStore()
    let loginWrites = LoginWriteGate()
    let failDeviceInserts = TestSwitch()
    let failReadiness = TestSwitch()
    let failGrantReads = TestSwitch()
    /// The database is unreachable: client and login reads and code spends throw as the SQL
    /// store does then (``SignetError/Code/storageUnavailable``), and readiness says so.
    let outage = TestSwitch()

    private func checkReachable() throws {
        if outage.isOn { throw SignetError(.storageUnavailable, "scripted: the database cannot be reached") }
    }

    func client(id: String) async throws -> ClientRecord? {
        try checkReachable()
        return try await base.client(id: id)
    }

    func insertClient(_ client: ClientRecord) async throws {
        try await base.insertClient(client)
    }

    func clientForChange(id: String) async throws -> (client: ClientRecord, version: String)? {
        try await base.clientForChange(id: id)
    }

    func replaceClient(_ client: ClientRecord, ifVersion version: String) async throws -> Bool {
        try await base.replaceClient(client, ifVersion: version)
    }

    func listClients() async throws -> [ClientRecord] {
        return try await base.listClients()
    }

    func deleteClient(id: String) async throws -> Bool {
        return try await base.deleteClient(id: id)
    }

    func user(id: String) async throws -> UserRecord? {
        return try await base.user(id: id)
    }

    func user(username: String) async throws -> UserRecord? {
        return try await base.user(username: username)
    }

    func insertUser(_ user: UserRecord) async throws {
        try await base.insertUser(user)
    }

    func listUsers() async throws -> [UserRecord] {
        return try await base.listUsers()
    }

    func deleteUser(id: String) async throws -> Bool {
        return try await base.deleteUser(id: id)
    }

    func signingKeys() async throws -> [SigningKeyRecord] {
        return try await base.signingKeys()
    }

    func insertSigningKey(_ key: SigningKeyRecord) async throws {
        try await base.insertSigningKey(key)
    }

    func updateSigningKey(kid: String, status: SigningKeyRecord.Status, publishUntil: Date?, activatedAt: Date?) async throws {
        try await base.updateSigningKey(kid: kid, status: status, publishUntil: publishUntil, activatedAt: activatedAt)
    }

    func deleteSigningKey(kid: String) async throws {
        try await base.deleteSigningKey(kid: kid)
    }

    func insertLoginSession(_ session: LoginSessionRecord) async throws {
        try await base.insertLoginSession(session)
    }

    func loginSession(id: String) async throws -> LoginSessionRecord? {
        try checkReachable()
        return try await base.loginSession(id: id)
    }

    func replaceLoginSession(_ session: LoginSessionRecord, expectedVersion: Int) async throws -> Bool {
        await loginWrites.pass()
        return try await base.replaceLoginSession(session, expectedVersion: expectedVersion)
    }

    func consumeLoginSession(id: String) async throws -> LoginSessionRecord? {
        return try await base.consumeLoginSession(id: id)
    }

    func insertGrant(_ grant: GrantRecord) async throws {
        try await base.insertGrant(grant)
    }

    func grant(id: String) async throws -> GrantRecord? {
        if failGrantReads.isOn { throw SignetError(.malformedMessage, "the grant cannot be read") }
        return try await base.grant(id: id)
    }

    func revokeGrant(id: String, at: Date) async throws -> Bool {
        try await base.revokeGrant(id: id, at: at)
    }

    func insertCode(_ code: AuthorizationCodeRecord) async throws {
        try await base.insertCode(code)
    }

    func code(hash: String) async throws -> AuthorizationCodeRecord? {
        return try await base.code(hash: hash)
    }

    /// As the SQL stores: the grant is read (and may fail to decode) only for the winner.
    func redeemCodeWithGrant(hash: String, at: Date) async throws -> Spend<AuthorizationCodeRecord> {
        try checkReachable()
        let spent = try await base.redeemCodeWithGrant(hash: hash, at: at)
        if case .redeemed = spent.redemption, failGrantReads.isOn { throw SignetError(.malformedMessage, "the grant cannot be read") }
        return spent
    }

    func useRefreshTokenWithGrant(hash: String, at: Date) async throws -> Spend<RefreshTokenRecord> {
        let spent = try await base.useRefreshTokenWithGrant(hash: hash, at: at)
        if case .redeemed = spent.redemption, failGrantReads.isOn { throw SignetError(.malformedMessage, "the grant cannot be read") }
        return spent
    }

    func insertRefreshToken(_ token: RefreshTokenRecord) async throws {
        try await base.insertRefreshToken(token)
    }

    func refreshToken(hash: String) async throws -> RefreshTokenRecord? {
        return try await base.refreshToken(hash: hash)
    }

    func insertRememberToken(_ token: RememberTokenRecord) async throws {
        try await base.insertRememberToken(token)
    }

    func rememberToken(hash: String) async throws -> RememberTokenRecord? {
        return try await base.rememberToken(hash: hash)
    }

    func deleteRememberToken(hash: String) async throws {
        try await base.deleteRememberToken(hash: hash)
    }

    func deleteRememberTokens(userID: String) async throws -> Int {
        return try await base.deleteRememberTokens(userID: userID)
    }

    func secret(named name: String, orStore candidate: String) async throws -> String {
        return try await base.secret(named: name, orStore: candidate)
    }

    func insertSession(_ session: BrowserSessionRecord) async throws {
        try await base.insertSession(session)
    }

    func session(idHash: String) async throws -> BrowserSessionRecord? {
        return try await base.session(idHash: idHash)
    }

    func deleteSession(idHash: String) async throws {
        try await base.deleteSession(idHash: idHash)
    }

    func recordOnce(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        return try await base.recordOnce(key: key, expiresAt: expiresAt, now: now)
    }

    func throttle(key: String) async throws -> ThrottleRecord? {
        return try await base.throttle(key: key)
    }

    func recordFailure(key: String, at: Date, resetBefore: Date) async throws -> ThrottleRecord {
        return try await base.recordFailure(key: key, at: at, resetBefore: resetBefore)
    }

    func resetThrottle(key: String, unchangedSince seen: ThrottleRecord) async throws {
        try await base.resetThrottle(key: key, unchangedSince: seen)
    }

    func takeSlot(_ slot: ThrottleSlot, expiresAt: Date, now: Date, failuresKey: String) async throws -> ThrottleSlotView {
        return try await base.takeSlot(slot, expiresAt: expiresAt, now: now, failuresKey: failuresKey)
    }

    func releaseSlots(_ slots: [ThrottleSlot]) async throws {
        try await base.releaseSlots(slots)
    }

    func limit(key: String) async throws -> LimitRecord? {
        return try await base.limit(key: key)
    }

    func replaceLimit(_ record: LimitRecord, expectedVersion: Int?) async throws -> Bool {
        return try await base.replaceLimit(record, expectedVersion: expectedVersion)
    }

    func purgeExpired(before: Date) async throws {
        try await base.purgeExpired(before: before)
    }

    func replaceClient(_ client: ClientRecord) async throws -> Bool {
        try await base.replaceClient(client)
    }

    func replaceUser(_ user: UserRecord, expectedStamp: String?) async throws -> Bool {
        try await base.replaceUser(user, expectedStamp: expectedStamp)
    }

    func revokeGrants(userID: String, at: Date) async throws -> Int {
        try await base.revokeGrants(userID: userID, at: at)
    }

    func insertPushedRequest(_ request: PushedRequestRecord) async throws {
        try await base.insertPushedRequest(request)
    }

    func pushedRequest(uriHash: String) async throws -> PushedRequestRecord? {
        try await base.pushedRequest(uriHash: uriHash)
    }

    func consumePushedRequest(uriHash: String) async throws -> PushedRequestRecord? {
        try await base.consumePushedRequest(uriHash: uriHash)
    }

    func insertApproval(_ approval: ApprovalRecord, pendingLimit: Int, now: Date) async throws -> Bool {
        try await base.insertApproval(approval, pendingLimit: pendingLimit, now: now)
    }

    func approval(idHash: String) async throws -> ApprovalRecord? {
        try await base.approval(idHash: idHash)
    }

    func pendingApprovals(userID: String, now: Date) async throws -> [ApprovalRecord] {
        try await base.pendingApprovals(userID: userID, now: now)
    }

    func decideApproval(_ approval: ApprovalRecord, now: Date) async throws -> Bool {
        try await base.decideApproval(approval, now: now)
    }

    func insertDeviceInstance(_ instance: DeviceInstanceRecord) async throws { try await base.insertDeviceInstance(instance) }
    func deviceInstance(id: String) async throws -> DeviceInstanceRecord? { try await base.deviceInstance(id: id) }
    func consumeDeviceInstance(id: String) async throws -> DeviceInstanceRecord? { try await base.consumeDeviceInstance(id: id) }
    func claimDeviceInstance(id: String, userID: String, now: Date) async throws -> Bool {
        try await base.claimDeviceInstance(id: id, userID: userID, now: now)
    }
    func insertDevice(_ device: DeviceRecord) async throws {
        if failDeviceInserts.isOn { throw SignetError(.storageFailure, "scripted failure") }
        try await base.insertDevice(device)
    }
    func device(instanceID: String) async throws -> DeviceRecord? { try await base.device(instanceID: instanceID) }
    func devices(userID: String) async throws -> [DeviceRecord] { try await base.devices(userID: userID) }
    func device(serial: String) async throws -> DeviceRecord? { try await base.device(serial: serial) }
    func touchDevice(instanceID: String, at date: Date) async throws { try await base.touchDevice(instanceID: instanceID, at: date) }
    func renameDevice(instanceID: String, name: String) async throws -> DeviceRecord? {
        try await base.renameDevice(instanceID: instanceID, name: name)
    }
    func revokeDevice(instanceID: String, reason: DeviceRevocationReason, replacedBy: String?, at date: Date) async throws -> DeviceRecord? {
        try await base.revokeDevice(instanceID: instanceID, reason: reason, replacedBy: replacedBy, at: date)
    }
    func bindGrant(id: String, toDevice instanceID: String, replacing previous: String?) async throws -> Bool {
        try await base.bindGrant(id: id, toDevice: instanceID, replacing: previous)
    }
    func appendAuditEvent(_ event: AuditEventRecord) async throws { try await base.appendAuditEvent(event) }
    func auditEvents(userID: String, limit: Int) async throws -> [AuditEventRecord] { try await base.auditEvents(userID: userID, limit: limit) }
    func auditEvents(_ query: AuditQuery) async throws -> [AuditEventRecord] { try await base.auditEvents(query) }
    func purgeAuditEvents(before cutoff: Date) async throws -> Int { try await base.purgeAuditEvents(before: cutoff) }
    func insertDeviceCA(_ authority: DeviceCARecord) async throws { try await base.insertDeviceCA(authority) }
    func deviceCAs() async throws -> [DeviceCARecord] { try await base.deviceCAs() }

    func deleteSessions(userID: String) async throws -> Int {
        try await base.deleteSessions(userID: userID)
    }

    func insertAuthenticator(_ authenticator: AuthenticatorRecord, maximumPerDevice: Int) async throws -> AuthenticatorRecord? {
        try await base.insertAuthenticator(authenticator, maximumPerDevice: maximumPerDevice)
    }
    func authenticator(userID: String, keyID: String) async throws -> AuthenticatorRecord? {
        try await base.authenticator(userID: userID, keyID: keyID)
    }
    func authenticator(id: String) async throws -> AuthenticatorRecord? { try await base.authenticator(id: id) }
    func authenticators(instanceID: String) async throws -> [AuthenticatorRecord] { try await base.authenticators(instanceID: instanceID) }
    func authenticators(userID: String) async throws -> [AuthenticatorRecord] { try await base.authenticators(userID: userID) }
    func deleteAuthenticator(id: String) async throws -> AuthenticatorRecord? { try await base.deleteAuthenticator(id: id) }
    func recordAuthenticatorUse(id: String, signCounter: UInt32, at date: Date) async throws -> CounterUpdate {
        try await base.recordAuthenticatorUse(id: id, signCounter: signCounter, at: date)
    }
    func recordPINFailure(id: String, pinKey: String, at now: Date, coolDowns: [TimeInterval]) async throws -> PINFailureOutcome {
        try await base.recordPINFailure(id: id, pinKey: pinKey, at: now, coolDowns: coolDowns)
    }
    func acceptPIN(id: String, pinKey: String, at now: Date, maximumFailures: Int) async throws -> Bool {
        try await base.acceptPIN(id: id, pinKey: pinKey, at: now, maximumFailures: maximumFailures)
    }
    func replacePINKey(id: String, from old: String, to new: String) async throws -> Bool { try await base.replacePINKey(id: id, from: old, to: new) }
    func durableWrites<T>(_ body: () async throws -> T) async throws -> T { try await base.durableWrites(body) }
    func unreadiness() async -> String? {
        if outage.isOn { return "the database cannot be reached" }
        return failReadiness.isOn ? "scripted: the database does not answer" : await base.unreadiness()
    }
}
