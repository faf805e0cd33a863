// Per-account budgets that outlive a single login: SMS sends per hour, wrong codes per day.
import Foundation
import SignetCore

/// Which per-account budget is spent.
enum AccountLimit: String, Sendable, Equatable {
    /// Wrong SMS codes across all the account's logins (``SMSPolicy/maxWrongCodesPerAccount``).
    case wrongCodes = "wrong_codes"
    /// SMS codes sent across all the account's logins (``SMSPolicy/maxSendsPerAccount``).
    case codeSends = "code_sends"
}

/// Sliding-window budgets per account, shared by every channel and every instance (they live in the store).
///
/// A use is taken *before* the thing it limits happens (a code is checked or sent) and given
/// back when it turns out not to count (a right code), so parallel requests never overspend.
struct AccountLimits: Sendable {
    let store: any LimitStore
    let policy: SMSPolicy
    let clock: SignetClock

    /// Whether a use was taken, or how long until one is free.
    enum Decision: Sendable, Equatable {
        case taken
        case spent(retryAfter: TimeInterval)
    }

    func take(_ limit: AccountLimit, userID: String) async throws -> Decision {
        let (maximum, window) = bounds(limit)
        let key = Self.key(limit, userID: userID)
        // Compare-and-swap; contention means another use was just recorded, so retrying converges.
        for _ in 0..<50 {
            let now = clock.now()
            let stored = try await store.limit(key: key)
            let live = (stored?.uses ?? []).filter { $0 > now.addingTimeInterval(-window) }
            if live.count >= maximum {
                let oldest = live[live.count - maximum]
                return .spent(retryAfter: max(1, oldest.addingTimeInterval(window).timeIntervalSince(now)))
            }
            let next = LimitRecord(key: key, uses: live + [now], version: (stored?.version ?? 0) + 1, expiresAt: now.addingTimeInterval(window))
            if try await store.replaceLimit(next, expectedVersion: stored?.version) { return .taken }
        }
        throw SignetError(.storageFailure, "the account limit \(limit.rawValue) stayed contended")
    }

    /// Returns the newest use taken (after a right code, or a request that lost its race).
    func giveBack(_ limit: AccountLimit, userID: String) async throws {
        let key = Self.key(limit, userID: userID)
        for _ in 0..<50 {
            guard let stored = try await store.limit(key: key), !stored.uses.isEmpty else { return }
            var next = stored
            next.uses.removeLast()
            next.version += 1
            if try await store.replaceLimit(next, expectedVersion: stored.version) { return }
        }
    }

    private func bounds(_ limit: AccountLimit) -> (Int, TimeInterval) {
        switch limit {
        case .wrongCodes: return (policy.maxWrongCodesPerAccount, policy.accountWrongCodeWindow)
        case .codeSends: return (policy.maxSendsPerAccount, policy.accountSendWindow)
        }
    }

    static func key(_ limit: AccountLimit, userID: String) -> String { "\(limit.rawValue):\(userID)" }
}
