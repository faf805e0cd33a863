// The throttled password check every login channel uses.
import Foundation
import Logging
import SignetCore
import SignetStore

/// Checks a name and password behind ``LoginThrottle``, so no channel is easier to brute-force.
struct PasswordChecker: Sendable {
    let users: any UserStore
    let throttle: LoginThrottle
    let passwords: PasswordHasher
    let logger: Logger

    /// Counts the attempt first (see ``LoginThrottle/reserve(username:address:)``), then checks.
    /// Unknown names cost the same bcrypt time as known ones and get the same answer.
    ///
    /// - Parameter requiredUserID: the only user this login may sign in (named by
    ///   `id_token_hint`, or remembered). Any other name is answered as a wrong password, so
    ///   the check cannot be used to confirm another account's password.
    func check(username: String, password: String, address: String, clientID: String, requiredUserID: String? = nil) async throws -> PasswordCheck {
        let reservation = try await throttle.reserve(username: username, address: address)
        if case .paused(let seconds) = reservation.decision {
            return .paused(seconds: seconds)
        }
        var user: UserRecord?
        do {
            user = try await users.user(username: username)
        } catch {
            // Whatever fails after the reservation, the attempt stays counted and its slots are freed.
            try? await throttle.recordFailure(reservation)
            throw error
        }
        if let requiredUserID, user?.id != requiredUserID { user = nil }
        guard await passwords.verify(password, hash: user?.passwordHash), let user else {
            try await throttle.recordFailure(reservation)
            logger.info("login failed", metadata: ["event": "login.failed", "client_id": .string(clientID)])
            return .rejected
        }
        do {
            try await throttle.recordSuccess(reservation)
        } catch {
            // Neither the reset nor the release binds: left undone, they count higher, never
            // lower. A right password is not refused for them.
            logger.warning("throttle bookkeeping after a right password failed", metadata: ["error": .string(String(describing: type(of: error)))])
        }
        if user.locked { return .locked }
        return .accepted(userID: user.id, phoneNumber: user.phoneNumber, securityStamp: user.securityStamp)
    }
}
