// Where every login begins and is found again, for every channel: the hosted page, the native
// login API and a device's authenticator.
import Foundation
import SignetCore
import SignetStore

/// How a login begins, by channel: the start event of ``LoginFlow``.
enum LoginStart: Sendable, Equatable {
    /// The hosted page, bound to the browser it was shown in; it may offer the browser's session.
    case page(browserBindingHash: String, csrfToken: String, offeredSessionSID: String?)
    /// The native login API, for a remembered user or not, in a language the app asked for.
    case api(rememberedUserID: String?, language: String?)
    /// An activated device's authenticator, for the device's user as they are now.
    case device(userID: String, userStamp: String?, instanceID: String)
}

extension LoginFlow {
    /// The login a start makes (id: the digest of the handle the channel hands out): its first
    /// step and what binds it to the channel. No channel builds a login record itself.
    static func begin(_ start: LoginStart, id: String, request: ValidatedAuthorizationRequest, now: Date, lifetime: TimeInterval)
        -> LoginSessionRecord
    {
        let expiresAt = now.addingTimeInterval(lifetime)
        switch start {
        case .page(let binding, let csrf, let offered):
            var session = LoginSessionRecord(
                id: id, channel: .page, request: request, browserBindingHash: binding, csrfToken: csrf, step: .usernamePassword, expiresAt: expiresAt)
            session.offeredSessionSID = offered
            return session
        case .api(let remembered, let language):
            return LoginSessionRecord(
                id: id, channel: .api, request: request, step: .selectScenario, userID: remembered, remembered: remembered != nil, language: language,
                expiresAt: expiresAt)
        case .device(let userID, let stamp, let instanceID):
            var session = LoginSessionRecord(id: id, channel: .device, request: request, step: .deviceAssertion, userID: userID, expiresAt: expiresAt)
            session.userStamp = stamp
            session.deviceInstanceID = instanceID
            return session
        }
    }
}

/// Logins in progress as the channels see them: begun (``start(_:request:lifetime:)``) and found
/// again by the handle the channel handed out, checked the same way for every channel.
struct LoginSessions: Sendable {
    let server: ServerContext
    let logins: any GrantStore
    let clients: any ClientStore

    /// What looking a login up found.
    enum Found: Sendable {
        /// The live login, with its client's minimum assurance as registered now, and the client.
        case live(LoginSessionRecord, ClientRecord)
        /// No live login of this channel under this handle (unknown, finished, expired, or another channel's).
        case none
        /// The login's client is no longer registered.
        case clientGone(LoginSessionRecord)
    }

    /// Stores the login `start` makes and returns it with its handle (a secret: only its digest is stored).
    func start(_ start: LoginStart, request: ValidatedAuthorizationRequest, lifetime: TimeInterval) async throws -> (
        session: LoginSessionRecord, handle: String
    ) {
        let handle = server.random.token()
        let session = LoginFlow.begin(start, id: SecretDigest.hex(handle), request: request, now: server.now(), lifetime: lifetime)
        try await logins.insertLoginSession(session)
        return (session, handle)
    }

    /// The live login of `channel` that `handle` names (at most 64 bytes).
    func load(handle: String, channel: LoginSessionRecord.Channel) async throws -> Found {
        guard handle.utf8.count <= 64 else { return .none }
        return try await load(id: SecretDigest.hex(handle), channel: channel)
    }

    /// The live login of `channel` stored under `id` (a device login names its own in the UAF
    /// request's `serverData`).
    func load(id: String, channel: LoginSessionRecord.Channel) async throws -> Found {
        guard let session = try await logins.loginSession(id: id), session.channel == channel, session.expiresAt > server.now() else { return .none }
        guard let client = try await clients.client(id: session.request.clientID) else { return .clientGone(session) }
        // The client's minimum assurance as it is now, not as it was when the login started.
        var current = session
        current.request.minimumACR = client.minimumACR
        return .live(current, client)
    }
}
