// AuthState: the signed-in user's tokens, refreshed when needed, kept in storage, observable.
import Foundation
import SignetCore

/// Holds the tokens of the signed-in user and hands out a fresh access token, refreshing
/// (once, however many callers ask at the same moment) when it is about to expire.
///
/// The one place an app keeps its sign-in: ``signIn(agent:scope:acrValues:loginHint:prompt:)``
/// or ``update(with:)-(AuthTokens)`` put tokens in, ``validTokens()`` / ``send(_:)`` use them,
/// ``signOut(endSession:)`` ends them. Every change is saved to the ``AuthStateStorage`` and
/// announced on ``changes``.
public actor AuthState {
    /// The tokens as stored.
    public typealias StoredTokens = AuthTokens

    /// A change of the signed-in state, in the order it happened.
    public enum Change: Sendable, Equatable {
        /// New tokens from a sign-in.
        case signedIn(AuthTokens)
        /// New tokens from a refresh (rotated refresh token, new access token).
        case refreshed(AuthTokens)
        /// The tokens are gone: signed out, or the grant ended (revoked, refresh token reused).
        case signedOut
    }

    public let client: SignetClient
    private let storage: any AuthStateStorage
    private var current: AuthTokens?
    private var refreshing: Task<AuthTokens, any Error>?
    /// Bumped by every sign-in and sign-out, so a refresh that started before one cannot undo it.
    private var generation = 0
    private let broadcaster = ChangeBroadcaster()
    /// Refresh this many seconds before the access token expires.
    public let refreshMargin: TimeInterval

    /// Reads the stored tokens, if any.
    public init(client: SignetClient, storage: any AuthStateStorage, refreshMargin: TimeInterval = 30) async throws {
        self.client = client
        self.storage = storage
        self.refreshMargin = refreshMargin
        do { self.current = try await storage.load() } catch { throw Self.storageError(error) }
    }

    /// Every later change, in order, to each subscriber (the current state is ``tokens``).
    ///
    /// The stream ends when the subscriber stops iterating; subscribing costs nothing otherwise.
    public nonisolated var changes: AsyncStream<Change> { broadcaster.subscribe() }

    /// Whether there are tokens.
    public var isSignedIn: Bool { current != nil }

    /// The current tokens as they are (possibly expired); ``validTokens()`` refreshes first.
    public var tokens: AuthTokens? { current }

    /// Signs in through the browser (``SignetClient/signIn(agent:scope:acrValues:loginHint:prompt:nonce:)``)
    /// and keeps the tokens.
    @discardableResult
    public func signIn(
        agent: any ExternalUserAgent, scope: String = "openid", acrValues: String? = nil, loginHint: String? = nil, prompt: String? = nil
    ) async throws -> AuthTokens {
        let tokens = try await client.signIn(agent: agent, scope: scope, acrValues: acrValues, loginHint: loginHint, prompt: prompt)
        try await update(with: tokens)
        return tokens
    }

    /// Keeps the checked tokens of a finished sign-in (browser or native login).
    public func update(with tokens: AuthTokens) async throws {
        generation += 1
        refreshing = nil
        try await keep(tokens, as: Change.signedIn)
    }

    /// Keeps a token response ``SignetClient`` returned (already checked there).
    public func update(with response: TokenResponse) async throws {
        // Checked by the client that returned it; read again only to keep the claims.
        let claims = response.idToken.flatMap(IDTokenClaims.unverified)
        try await update(
            with: AuthTokens(
                tokens: response, accessTokenExpiresAt: client.now().addingTimeInterval(TimeInterval(response.expiresIn ?? 300)),
                idTokenClaims: claims))
    }

    /// Tokens whose access token is valid for at least ``refreshMargin`` more seconds, refreshed first when needed.
    ///
    /// Many callers at once share one refresh. Throws ``SignetClientError/Code/notSignedIn``
    /// (the same for every caller) when there are no tokens or the grant is gone; other refresh
    /// errors (offline) are thrown as they are and the tokens are kept for a later try.
    public func validTokens() async throws -> AuthTokens {
        guard let tokens = current else { throw SignetClientError(.notSignedIn, isRetryable: false) }
        if tokens.accessTokenExpiresAt.timeIntervalSince(client.now()) > refreshMargin { return tokens }
        if let refreshing { return try await refreshing.value }
        guard let refreshToken = tokens.tokens.refreshToken else {
            throw SignetClientError(.notSignedIn, isRetryable: false, reason: "the access token expired and there is no refresh token")
        }
        let task = Task { [client] in
            do {
                var refreshed = try await client.refresh(refreshToken, previous: tokens.idTokenClaims)
                // A refresh answer may leave out the refresh token; keep the old one then.
                if refreshed.tokens.refreshToken == nil { refreshed.tokens.refreshToken = refreshToken }
                return refreshed
            } catch let error as SignetClientError where error.serverError?.error == .invalidGrant {
                // The grant is gone (revoked, or the refresh token reused): sign in again.
                throw SignetClientError(.notSignedIn, serverError: error.serverError, status: error.status, isRetryable: false, underlying: error)
            }
        }
        let started = generation
        refreshing = task
        do {
            let refreshed = try await task.value
            if generation == started {
                refreshing = nil
                try await keep(refreshed, as: Change.refreshed)
            }
            return refreshed
        } catch let error as SignetClientError where error.code == .notSignedIn {
            if generation == started { try await forget() }
            throw error
        } catch {
            if generation == started { refreshing = nil }
            throw error
        }
    }

    /// A valid access token, refreshed first when it expires within ``refreshMargin``; see ``validTokens()``.
    public func freshAccessToken() async throws -> String { try await validTokens().accessToken }

    /// Sends `request` to a resource with a valid access token (DPoP-bound or bearer), see
    /// ``SignetClient/send(_:authorizedWith:)``.
    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        try await client.send(request, authorizedWith: try await validTokens())
    }

    /// Signs out: forgets the tokens (storage too), revokes the refresh token at the provider
    /// (RFC 7009; the access token when there is no refresh token — Signet then ends the whole
    /// grant either way) and, when `endSession` is true, makes the end-session URL (RP-Initiated Logout §2)
    /// for the app to open in its ``ExternalUserAgent``.
    ///
    /// The tokens are forgotten even when revocation fails (offline, provider down): a user who
    /// signs out must be signed out on this device. The failure is reported in
    /// ``SignOutResult/revocationError``, not thrown. Throws only when storage cannot be cleared
    /// (`storage`): the tokens are gone from memory but may still be on disk.
    @discardableResult
    public func signOut(endSession: Bool = false) async throws -> SignOutResult {
        let tokens = current
        try await forget()
        var result = SignOutResult(revoked: true)
        let revocable = tokens?.tokens.refreshToken.map { ($0, "refresh_token") } ?? tokens.map { ($0.tokens.accessToken, "access_token") }
        if let (token, hint) = revocable {
            do {
                try await client.revoke(token, hint: hint)
            } catch {
                result.revoked = false
                result.revocationError = SignetClientError.wrap(error)
            }
        }
        if endSession {
            let state = client.random.token(byteCount: 16)
            result.endSessionURL = try? await client.endSessionURL(idTokenHint: tokens?.tokens.idToken, state: state)
            result.endSessionState = result.endSessionURL == nil ? nil : state
        }
        return result
    }

    // MARK: plumbing

    private func keep(_ tokens: AuthTokens, as change: (AuthTokens) -> Change) async throws {
        current = tokens
        broadcaster.yield(change(tokens))
        do { try await storage.save(tokens) } catch { throw Self.storageError(error) }
    }

    private func forget() async throws {
        generation += 1
        refreshing = nil
        let wasSignedIn = current != nil
        current = nil
        if wasSignedIn { broadcaster.yield(.signedOut) }
        do { try await storage.clear() } catch { throw Self.storageError(error) }
    }

    private static func storageError(_ error: any Error) -> SignetClientError {
        if let error = error as? SignetClientError { return error }
        return SignetClientError(.storage, isRetryable: true, underlying: error)
    }
}

extension SignOutResult {
    init(revoked: Bool) { self.init(revoked: revoked, revocationError: nil, endSessionURL: nil, endSessionState: nil) }
}

/// Where ``AuthState`` keeps tokens between launches.
public protocol AuthStateStorage: Sendable {
    func load() async throws -> AuthState.StoredTokens?
    func save(_ tokens: AuthState.StoredTokens) async throws
    func clear() async throws
}

/// Keeps tokens in memory only.
public actor MemoryAuthStateStorage: AuthStateStorage {
    private var stored: AuthState.StoredTokens?
    public init() {}
    public func load() -> AuthState.StoredTokens? { stored }
    public func save(_ tokens: AuthState.StoredTokens) { stored = tokens }
    public func clear() { stored = nil }
}

/// Keeps tokens in a file only its owner can read (for Linux and command-line tools;
/// on Apple platforms prefer ``KeychainAuthStateStorage``).
public struct FileAuthStateStorage: AuthStateStorage {
    public let file: URL
    public init(file: URL) { self.file = file }

    public func load() throws -> AuthState.StoredTokens? {
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        return try JSONDecoder().decode(AuthState.StoredTokens.self, from: data)
    }

    public func save(_ tokens: AuthState.StoredTokens) throws {
        let data = try JSONEncoder().encode(tokens)
        do { try PrivateFile.write(data, to: file.path) } catch {
            throw SignetClientError(.storage, isRetryable: true, reason: "the token file could not be written", underlying: error)
        }
    }

    public func clear() throws {
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}
