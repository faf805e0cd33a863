// An in-memory SignetStore for fast tests and throwaway servers.
import Foundation
import SignetCore

/// Keeps everything in memory; an actor, so every single-use rule holds under concurrency.
public actor MemoryStore: SignetStore {
    private var clients: [String: ClientRecord] = [:]
    private var users: [String: UserRecord] = [:]
    private var keys: [String: SigningKeyRecord] = [:]
    /// How often each client was replaced: its version for a compare-and-swap.
    private var clientVersions: [String: Int] = [:]
    private var loginSessions: [String: LoginSessionRecord] = [:]
    private var rememberTokens: [String: RememberTokenRecord] = [:]
    private var secrets: [String: String] = [:]
    private var grants: [String: GrantRecord] = [:]
    private var codes: [String: AuthorizationCodeRecord] = [:]
    private var refreshTokens: [String: RefreshTokenRecord] = [:]
    private var sessions: [String: BrowserSessionRecord] = [:]
    private var seen: [String: Date] = [:]
    private var throttles: [String: ThrottleRecord] = [:]
    /// The slots of checks in progress: key → slot id → until when it counts.
    private var throttleSlots: [String: [String: Date]] = [:]
    private var limits: [String: LimitRecord] = [:]
    private var pushedRequests: [String: PushedRequestRecord] = [:]
    private var deviceInstances: [String: DeviceInstanceRecord] = [:]
    private var devices: [String: DeviceRecord] = [:]
    private var deviceAuthorities: [DeviceCARecord] = []
    private var auditEvents: [AuditEventRecord] = []
    private var authenticatorRecords: [String: AuthenticatorRecord] = [:]
    private var approvals: [String: ApprovalRecord] = [:]

    public init() {}

    public func client(id: String) -> ClientRecord? { clients[id] }
    public func insertClient(_ client: ClientRecord) throws {
        guard clients[client.id] == nil else { throw SignetError(.conflict, "a client with this id exists") }
        clients[client.id] = client
    }
    public func listClients() -> [ClientRecord] { clients.values.sorted { $0.id < $1.id } }
    public func deleteClient(id: String) -> Bool { clients.removeValue(forKey: id) != nil }
    public func replaceClient(_ client: ClientRecord) -> Bool {
        guard clients[client.id] != nil else { return false }
        clients[client.id] = client
        clientVersions[client.id, default: 0] += 1
        return true
    }
    public func clientForChange(id: String) -> (client: ClientRecord, version: String)? {
        clients[id].map { ($0, String(clientVersions[id, default: 0])) }
    }
    public func replaceClient(_ client: ClientRecord, ifVersion version: String) -> Bool {
        guard clients[client.id] != nil, String(clientVersions[client.id, default: 0]) == version else { return false }
        return replaceClient(client)
    }

    public func user(id: String) -> UserRecord? { users[id] }
    public func user(username: String) -> UserRecord? { users.values.first { $0.username == username } }
    public func insertUser(_ user: UserRecord) throws {
        guard users[user.id] == nil, !users.values.contains(where: { $0.username == user.username }) else {
            throw SignetError(.conflict, "a user with this username exists")
        }
        users[user.id] = user
    }
    public func listUsers() -> [UserRecord] { users.values.sorted { $0.username < $1.username } }
    public func deleteUser(id: String) -> Bool { users.removeValue(forKey: id) != nil }
    public func replaceUser(_ user: UserRecord, expectedStamp: String?) -> Bool {
        guard let stored = users[user.id], stored.username == user.username, stored.securityStamp == expectedStamp else { return false }
        users[user.id] = user
        return true
    }

    public func signingKeys() -> [SigningKeyRecord] { keys.values.sorted { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) } }
    public func insertSigningKey(_ key: SigningKeyRecord) { if keys[key.kid] == nil { keys[key.kid] = key } }
    public func updateSigningKey(kid: String, status: SigningKeyRecord.Status, publishUntil: Date?, activatedAt: Date?) throws {
        guard keys[kid] != nil else { throw SignetError(.notFound, "no signing key \(kid)") }
        keys[kid]?.status = status
        keys[kid]?.publishUntil = publishUntil
        if let activatedAt { keys[kid]?.activatedAt = activatedAt }
    }
    public func deleteSigningKey(kid: String) { keys[kid] = nil }

    public func insertLoginSession(_ session: LoginSessionRecord) { loginSessions[session.id] = session }
    public func loginSession(id: String) -> LoginSessionRecord? { loginSessions[id] }
    public func replaceLoginSession(_ session: LoginSessionRecord, expectedVersion: Int) -> Bool {
        guard loginSessions[session.id]?.version == expectedVersion else { return false }
        loginSessions[session.id] = session
        return true
    }
    public func consumeLoginSession(id: String) -> LoginSessionRecord? { loginSessions.removeValue(forKey: id) }

    public func insertRememberToken(_ token: RememberTokenRecord) { rememberTokens[token.tokenHash] = token }
    public func rememberToken(hash: String) -> RememberTokenRecord? { rememberTokens[hash] }
    public func deleteRememberToken(hash: String) { rememberTokens[hash] = nil }
    public func deleteRememberTokens(userID: String) -> Int {
        let matching = rememberTokens.filter { $0.value.userID == userID }
        for key in matching.keys { rememberTokens[key] = nil }
        return matching.count
    }

    public func secret(named name: String, orStore candidate: String) -> String {
        if let existing = secrets[name] { return existing }
        secrets[name] = candidate
        return candidate
    }

    public func insertGrant(_ grant: GrantRecord) { grants[grant.id] = grant }
    public func grant(id: String) -> GrantRecord? { grants[id] }
    public func revokeGrants(userID: String, at date: Date) -> Int {
        let live = grants.values.filter { $0.userID == userID && $0.revokedAt == nil }.map(\.id)
        for id in live { revokeGrant(id: id, at: date) }
        return live.count
    }
    @discardableResult
    public func revokeGrant(id: String, at date: Date) -> Bool {
        let live = grants[id].map { $0.revokedAt == nil } ?? false
        if live { grants[id]?.revokedAt = date }
        for (hash, token) in refreshTokens where token.grantID == id && token.usedAt == nil {
            refreshTokens[hash]?.usedAt = date
        }
        return live
    }

    public func insertCode(_ code: AuthorizationCodeRecord) { codes[code.codeHash] = code }
    public func code(hash: String) -> AuthorizationCodeRecord? { codes[hash] }
    public func redeemCodeWithGrant(hash: String, at date: Date) -> Spend<AuthorizationCodeRecord> {
        guard var code = codes[hash] else { return Spend(.unknown) }
        if code.redeemedAt != nil { return Spend(.alreadyUsed(grantID: code.grantID)) }
        code.redeemedAt = date
        codes[hash] = code
        return Spend(.redeemed(code), grant: grants[code.grantID], user: grants[code.grantID].flatMap { users[$0.userID] })
    }

    public func insertRefreshToken(_ token: RefreshTokenRecord) { refreshTokens[token.tokenHash] = token }
    public func refreshToken(hash: String) -> RefreshTokenRecord? { refreshTokens[hash] }
    public func useRefreshTokenWithGrant(hash: String, at date: Date) -> Spend<RefreshTokenRecord> {
        guard var token = refreshTokens[hash] else { return Spend(.unknown) }
        if token.usedAt != nil { return Spend(.alreadyUsed(grantID: token.grantID)) }
        token.usedAt = date
        refreshTokens[hash] = token
        return Spend(.redeemed(token), grant: grants[token.grantID], user: grants[token.grantID].flatMap { users[$0.userID] })
    }

    public func insertSession(_ session: BrowserSessionRecord) { sessions[session.idHash] = session }
    public func session(idHash: String) -> BrowserSessionRecord? { sessions[idHash] }
    public func deleteSession(idHash: String) { sessions[idHash] = nil }
    public func deleteSessions(userID: String) -> Int {
        let ended = sessions.filter { $0.value.userID == userID }.map(\.key)
        for key in ended { sessions[key] = nil }
        return ended.count
    }

    public func recordOnce(key: String, expiresAt: Date, now: Date) -> Bool {
        if let until = seen[key], until > now { return false }
        seen[key] = expiresAt
        return true
    }

    public func throttle(key: String) -> ThrottleRecord? { throttles[key] }
    public func recordFailure(key: String, at date: Date, resetBefore: Date) -> ThrottleRecord {
        var record = throttles[key] ?? ThrottleRecord(key: key, failures: 0, lastFailureAt: date)
        if record.lastFailureAt < resetBefore { record.failures = 0 }
        record.failures += 1
        record.lastFailureAt = date
        throttles[key] = record
        return record
    }
    public func resetThrottle(key: String, unchangedSince seen: ThrottleRecord) {
        guard let record = throttles[key], record.failures <= seen.failures, record.lastFailureAt <= seen.lastFailureAt else { return }
        throttles[key] = nil
    }
    public func takeSlot(_ slot: ThrottleSlot, expiresAt: Date, now: Date, failuresKey: String) -> ThrottleSlotView {
        var slots = throttleSlots[slot.key] ?? [:]
        slots[slot.id] = expiresAt
        let live = slots.filter { $0.value > now }
        throttleSlots[slot.key] = live
        return ThrottleSlotView(liveSlots: live.count, failures: throttles[failuresKey])
    }
    public func releaseSlots(_ slots: [ThrottleSlot]) {
        for slot in slots {
            throttleSlots[slot.key]?[slot.id] = nil
            if throttleSlots[slot.key]?.isEmpty == true { throttleSlots[slot.key] = nil }
        }
    }
    /// The slots under `key` still counting at `now` (for tests).
    public func liveThrottleSlots(key: String, at now: Date) -> Int { throttleSlots[key]?.values.filter { $0 > now }.count ?? 0 }

    public func insertPushedRequest(_ request: PushedRequestRecord) { pushedRequests[request.uriHash] = request }
    public func pushedRequest(uriHash: String) -> PushedRequestRecord? { pushedRequests[uriHash] }
    public func consumePushedRequest(uriHash: String) -> PushedRequestRecord? { pushedRequests.removeValue(forKey: uriHash) }

    public func insertDeviceInstance(_ instance: DeviceInstanceRecord) { deviceInstances[instance.id] = instance }
    public func deviceInstance(id: String) -> DeviceInstanceRecord? { deviceInstances[id] }
    public func consumeDeviceInstance(id: String) -> DeviceInstanceRecord? { deviceInstances.removeValue(forKey: id) }
    public func claimDeviceInstance(id: String, userID: String, now: Date) -> Bool {
        guard var instance = deviceInstances[id], instance.expiresAt > now, instance.userID == nil || instance.userID == userID else { return false }
        instance.userID = userID
        deviceInstances[id] = instance
        return true
    }
    public func insertDevice(_ device: DeviceRecord) throws {
        guard devices[device.instanceID] == nil else { throw SignetError(.conflict, "the device exists") }
        devices[device.instanceID] = device
    }
    public func device(instanceID: String) -> DeviceRecord? { devices[instanceID] }
    public func devices(userID: String) -> [DeviceRecord] { devices.values.filter { $0.userID == userID }.sorted { $0.createdAt < $1.createdAt } }
    public func device(serial: String) -> DeviceRecord? { devices.values.first { $0.certificateSerial == serial } }
    public func touchDevice(instanceID: String, at date: Date) {
        guard let last = devices[instanceID]?.lastUsedAt else {
            devices[instanceID]?.lastUsedAt = date
            return
        }
        if date.timeIntervalSince(last) >= 60 { devices[instanceID]?.lastUsedAt = date }
    }
    public func renameDevice(instanceID: String, name: String) -> DeviceRecord? {
        guard devices[instanceID]?.revokedAt == nil, devices[instanceID] != nil else { return nil }
        devices[instanceID]?.name = name
        return devices[instanceID]
    }
    public func revokeDevice(instanceID: String, reason: DeviceRevocationReason, replacedBy: String?, at date: Date) -> DeviceRecord? {
        guard var device = devices[instanceID], device.revokedAt == nil else { return nil }
        device.revokedAt = date
        device.revocationReason = reason
        device.replacedBy = replacedBy
        devices[instanceID] = device
        for grant in grants.values where grant.deviceID == instanceID { revokeGrant(id: grant.id, at: date) }
        for authenticator in authenticatorRecords.values where authenticator.instanceID == instanceID {
            if reason == .replaced, let replacedBy {
                authenticatorRecords[authenticator.id]?.instanceID = replacedBy
            } else {
                authenticatorRecords.removeValue(forKey: authenticator.id)
            }
        }
        return device
    }
    public func bindGrant(id: String, toDevice instanceID: String, replacing previous: String?) -> Bool {
        guard let grant = grants[id], grant.deviceID == nil || grant.deviceID == instanceID || (previous != nil && grant.deviceID == previous) else {
            return false
        }
        grants[id]?.deviceID = instanceID
        return true
    }
    public func insertDeviceCA(_ authority: DeviceCARecord) { deviceAuthorities.append(authority) }
    public func deviceCAs() -> [DeviceCARecord] { deviceAuthorities.sorted { $0.createdAt > $1.createdAt } }

    public func appendAuditEvent(_ event: AuditEventRecord) { auditEvents.append(event) }
    public func auditEvents(_ query: AuditQuery) -> [AuditEventRecord] {
        Array(
            auditEvents.enumerated().filter { query.matches($0.element) }.sorted { ($0.element.at, $0.offset) > ($1.element.at, $1.offset) }.map(
                \.element
            ).prefix(query.limit))
    }

    public func purgeAuditEvents(before cutoff: Date) -> Int {
        let before = auditEvents.count
        auditEvents.removeAll { $0.at < cutoff }
        return before - auditEvents.count
    }

    public func auditEvents(userID: String, limit: Int) -> [AuditEventRecord] {
        // Newest first; events of the same moment latest first, as written.
        Array(
            auditEvents.reversed().filter { $0.userID == userID }.enumerated().sorted { ($0.element.at, -$0.offset) > ($1.element.at, -$1.offset) }
                .map(\.element).prefix(limit))
    }

    public func limit(key: String) -> LimitRecord? { limits[key] }
    public func replaceLimit(_ record: LimitRecord, expectedVersion: Int?) -> Bool {
        guard limits[record.key]?.version == expectedVersion else { return false }
        limits[record.key] = record
        return true
    }

    public func purgeExpired(before date: Date) {
        // Decided or not, an approval is kept a day after its expiry, for the audit of a late decision.
        approvals = approvals.filter { $0.value.expiresAt >= date.addingTimeInterval(-86_400) }
        limits = limits.filter { $0.value.expiresAt >= date }
        pushedRequests = pushedRequests.filter { $0.value.expiresAt >= date }
        deviceInstances = deviceInstances.filter { $0.value.expiresAt >= date }
        loginSessions = loginSessions.filter { $0.value.expiresAt >= date }
        rememberTokens = rememberTokens.filter { $0.value.expiresAt >= date }
        // Redeemed codes are kept a day so that a late replay still revokes what was issued from them.
        codes = codes.filter { $0.value.expiresAt >= date.addingTimeInterval(-86_400) }
        refreshTokens = refreshTokens.filter { $0.value.expiresAt >= date }
        grants = grants.filter { $0.value.expiresAt >= date }
        sessions = sessions.filter { $0.value.expiresAt >= date }
        seen = seen.filter { $0.value >= date }
        throttles = throttles.filter { $0.value.lastFailureAt >= date.addingTimeInterval(-ThrottleRecord.retention) }
        throttleSlots = throttleSlots.compactMapValues { slots in
            let live = slots.filter { $0.value >= date }
            return live.isEmpty ? nil : live
        }
    }
}

extension MemoryStore {
    public func insertAuthenticator(_ authenticator: AuthenticatorRecord, maximumPerDevice: Int) throws -> AuthenticatorRecord? {
        guard self.authenticator(userID: authenticator.userID, keyID: authenticator.keyID) == nil else {
            throw SignetError(.conflict, "the user has an authenticator with this KeyID")
        }
        let onDevice = authenticatorRecords.values.filter { $0.instanceID == authenticator.instanceID }
        guard !onDevice.contains(where: { $0.aaid == authenticator.aaid }) else {
            throw SignetError(.conflict, "the device has an authenticator \(authenticator.aaid)")
        }
        let taken = Set(onDevice.map(\.slot))
        guard let slot = (1...max(1, maximumPerDevice)).first(where: { !taken.contains($0) }) else { return nil }
        var record = authenticator
        record.slot = slot
        authenticatorRecords[record.id] = record
        return record
    }
    public func authenticator(userID: String, keyID: String) -> AuthenticatorRecord? {
        authenticatorRecords.values.first { $0.userID == userID && $0.keyID == keyID }
    }
    public func authenticator(id: String) -> AuthenticatorRecord? { authenticatorRecords[id] }
    public func authenticators(instanceID: String) -> [AuthenticatorRecord] {
        authenticatorRecords.values.filter { $0.instanceID == instanceID }.sorted { $0.slot < $1.slot }
    }
    public func authenticators(userID: String) -> [AuthenticatorRecord] {
        authenticatorRecords.values.filter { $0.userID == userID }.sorted { ($0.createdAt, $0.slot) < ($1.createdAt, $1.slot) }
    }
    public func deleteAuthenticator(id: String) -> AuthenticatorRecord? { authenticatorRecords.removeValue(forKey: id) }
    public func recordAuthenticatorUse(id: String, signCounter: UInt32, at date: Date) -> CounterUpdate {
        guard var record = authenticatorRecords[id] else { return .unknown }
        guard record.cloneSuspectedAt == nil, (signCounter == 0 && record.signCounter == 0) || record.signCounter < signCounter else {
            authenticatorRecords[id]?.cloneSuspectedAt = record.cloneSuspectedAt ?? date
            return .regressed
        }
        record.signCounter = signCounter
        record.lastUsedAt = date
        authenticatorRecords[id] = record
        return .accepted
    }
    public func recordPINFailure(id: String, pinKey: String, at now: Date, coolDowns: [TimeInterval]) -> PINFailureOutcome {
        guard var record = authenticatorRecords[id], record.pinKey == pinKey else { return .coolingDown(until: nil) }
        if let until = record.pinBlockedUntil, until > now { return .coolingDown(until: nil) }
        record.pinFailures += 1
        let wait = record.pinFailures <= coolDowns.count ? coolDowns[record.pinFailures - 1] : 0
        record.pinBlockedUntil = wait > 0 ? now.addingTimeInterval(wait) : nil
        authenticatorRecords[id] = record
        return .counted(failures: record.pinFailures, blockedUntil: record.pinBlockedUntil)
    }
    public func acceptPIN(id: String, pinKey: String, at now: Date, maximumFailures: Int) -> Bool {
        guard let record = authenticatorRecords[id], record.pinKey == pinKey, record.pinFailures < maximumFailures else { return false }
        if let until = record.pinBlockedUntil, until > now { return false }
        authenticatorRecords[id]?.pinFailures = 0
        authenticatorRecords[id]?.pinBlockedUntil = nil
        return true
    }
    public func replacePINKey(id: String, from old: String, to new: String) -> Bool {
        guard authenticatorRecords[id]?.pinKey == old else { return false }
        authenticatorRecords[id]?.pinKey = new
        authenticatorRecords[id]?.pinFailures = 0
        authenticatorRecords[id]?.pinBlockedUntil = nil
        return true
    }
}

extension MemoryStore {
    /// Memory is always ready.
    public func unreadiness() -> String? { nil }

    /// Memory has no disk to wait for.
    public nonisolated func durableWrites<T>(_ body: () async throws -> T) async throws -> T { try await body() }
}

// Approvals (``ApprovalStore``).
extension MemoryStore {
    public func insertApproval(_ approval: ApprovalRecord, pendingLimit: Int, now: Date) -> Bool {
        guard approvals[approval.idHash] == nil else { return false }
        let pending = approvals.values.filter { $0.userID == approval.userID && $0.status == .pending && $0.expiresAt > now }
        guard pending.count < pendingLimit else { return false }
        approvals[approval.idHash] = approval
        return true
    }

    public func approval(idHash: String) -> ApprovalRecord? { approvals[idHash] }

    public func pendingApprovals(userID: String, now: Date) -> [ApprovalRecord] {
        approvals.values.filter { $0.userID == userID && $0.status == .pending && $0.expiresAt > now }
            .sorted { ($0.createdAt, $0.idHash) > ($1.createdAt, $1.idHash) }
    }

    public func decideApproval(_ approval: ApprovalRecord, now: Date) -> Bool {
        guard let stored = approvals[approval.idHash], stored.status == .pending, stored.expiresAt > now else { return false }
        approvals[approval.idHash] = approval
        return true
    }
}
