// Per-account budgets that outlive a single login: SMS sends per hour, wrong codes per day.
import Foundation
import SignetCore
import SignetStore

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

    typealias Decision = SlidingWindow.Decision

    func take(_ limit: AccountLimit, userID: String) async throws -> Decision {
        let (maximum, window) = bounds(limit)
        return try await SlidingWindow(store: store, clock: clock).take(Self.key(limit, userID: userID), maximum: maximum, window: window)
    }

    /// Returns the newest use taken (after a right code, or a request that lost its race).
    func giveBack(_ limit: AccountLimit, userID: String) async throws {
        let (maximum, _) = bounds(limit)
        try await SlidingWindow(store: store, clock: clock).giveBack(Self.key(limit, userID: userID), maximum: maximum)
    }

    private func bounds(_ limit: AccountLimit) -> (Int, TimeInterval) {
        switch limit {
        case .wrongCodes: return (policy.maxWrongCodesPerAccount, policy.accountWrongCodeWindow)
        case .codeSends: return (policy.maxSendsPerAccount, policy.accountSendWindow)
        }
    }

    static func key(_ limit: AccountLimit, userID: String) -> String { "\(limit.rawValue):\(userID)" }
}
