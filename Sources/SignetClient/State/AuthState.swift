// AuthState: the app's tokens, refreshed when needed, kept in storage.
import Foundation
import SignetCore

/// Holds the tokens of the signed-in user and hands out a fresh access token,
/// refreshing (once, however many callers ask at the same moment) when it is about to expire.
public actor AuthState {
    private let client: SignetClient
    private let storage: any AuthStateStorage
    private var tokens: StoredTokens?
    private var refreshing: Task<StoredTokens, any Error>?
    /// Bumped by every sign-in and sign-out, so a refresh that started before one cannot undo it.
    private var generation = 0
    /// Refresh this many seconds before the access token expires.
    public let refreshMargin: TimeInterval

    /// The tokens as stored: the token response and when its access token expires.
    public struct StoredTokens: Sendable, Codable, Equatable {
        public var tokens: TokenResponse
        public var accessTokenExpiresAt: Date
    }

    public init(client: SignetClient, storage: any AuthStateStorage, refreshMargin: TimeInterval = 30) async throws {
        self.client = client
        self.storage = storage
        self.refreshMargin = refreshMargin
        self.tokens = try await storage.load()
    }

    /// Whether there are tokens.
    public var isSignedIn: Bool { tokens != nil }

    /// Keeps the tokens of a finished sign-in.
    public func update(with response: TokenResponse) async throws {
        generation += 1
        refreshing = nil
        try await store(response)
    }

    private func store(_ response: TokenResponse) async throws {
        var merged = response
        // A refresh answer may leave out the refresh token; keep the old one then.
        if merged.refreshToken == nil { merged.refreshToken = tokens?.tokens.refreshToken }
        let stored = StoredTokens(tokens: merged, accessTokenExpiresAt: client.now().addingTimeInterval(TimeInterval(response.expiresIn ?? 300)))
        tokens = stored
        try await storage.save(stored)
    }

    /// A valid access token, refreshed first when it expires within ``refreshMargin``.
    ///
    /// Many callers at once share one refresh. Throws ``SignetClientError/Code/notSignedIn``
    /// (the same for every caller) when there are no tokens or the grant is gone.
    public func freshAccessToken() async throws -> String {
        guard let current = tokens else { throw SignetClientError(.notSignedIn, isRetryable: false) }
        if current.accessTokenExpiresAt.timeIntervalSince(client.now()) > refreshMargin { return current.tokens.accessToken }
        if let refreshing { return try await refreshing.value.tokens.accessToken }
        guard let refreshToken = current.tokens.refreshToken else { throw SignetClientError(.notSignedIn, isRetryable: false) }
        let task = Task { [client] in
            do {
                let response = try await client.refresh(refreshToken)
                return StoredTokens(tokens: response, accessTokenExpiresAt: client.now().addingTimeInterval(TimeInterval(response.expiresIn ?? 300)))
            } catch let error as SignetClientError where error.serverError?.error == .invalidGrant {
                // The grant is gone (revoked, or the refresh token reused): sign in again.
                throw SignetClientError(.notSignedIn, serverError: error.serverError, status: error.status, isRetryable: false)
            }
        }
        let started = generation
        refreshing = task
        do {
            let refreshed = try await task.value
            if generation == started {
                refreshing = nil
                try await store(refreshed.tokens)
            }
            return refreshed.tokens.accessToken
        } catch let error as SignetClientError where error.code == .notSignedIn {
            if generation == started { try await signOut() }
            throw error
        } catch {
            if generation == started { refreshing = nil }
            throw error
        }
    }

    /// Forgets the tokens.
    public func signOut() async throws {
        generation += 1
        refreshing = nil
        tokens = nil
        try await storage.clear()
    }
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
        guard FileManager.default.createFile(atPath: file.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw SignetClientError(.misuse, isRetryable: false)
        }
    }

    public func clear() throws {
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}
