// Administration: registering clients and users with every rule checked.
import Crypto
import Foundation
import Logging
import SignetCore
import SignetStore

/// What an administrator (or the `signet` command, or a test) can do to the provider's data.
public struct SignetAdmin: Sendable {
    /// What administration reads and changes: clients, users (and, on a lock or a new password,
    /// their grants, sessions and remember tokens), the signing keys (a rotation is recorded once,
    /// ``ReplayStore``), and the audit trail.
    public typealias Store = ClientStore & UserStore & SigningKeyStore & ReplayStore & GrantStore & SessionStore & RememberTokenStore & AuditStore

    public let store: any Store
    public let clock: SignetClock
    public let random: SecureRandom
    public let passwords: PasswordHasher
    /// Every change is an `admin` event in the audit trail.
    public let audit: AuditTrail

    /// The commands' logger: the events are stored, so they are not also printed.
    public static var quietLogger: Logger {
        var logger = Logger(label: "signet.admin")
        logger.logLevel = .warning
        return logger
    }

    public init(
        store: any Store, passwordHashCost: Int, clock: SignetClock = .system, random: SecureRandom = SecureRandom(),
        logger: Logger = SignetAdmin.quietLogger
    ) {
        self.store = store
        self.clock = clock
        self.random = random
        self.passwords = PasswordHasher(cost: passwordHashCost)
        self.audit = AuditTrail(store: store, clock: clock, random: random, logger: logger)
    }

    /// A client to register.
    public struct NewClient: Sendable, Equatable {
        public var id: String
        public var name: String
        public var authMethod: ClientRecord.AuthMethod
        public var redirectURIs: [String]
        public var postLogoutRedirectURIs: [String]
        public var jwks: String?
        public var jwksURI: String?
        public var allowsRefreshTokens: Bool
        /// See ``ClientRecord/minimumACR``.
        public var minimumACR: String?
        /// See ``ClientRecord/nativeLogin``.
        public var nativeLogin: Bool
        /// See ``ClientRecord/requirePushedAuthorizationRequests``.
        public var requirePushedAuthorizationRequests: Bool = false
        /// See ``ClientRecord/requireSignedRequestObject``.
        public var requireSignedRequestObject: Bool = false
        /// See ``ClientRecord/appLaunchURLs``.
        public var appLaunchURLs: [String] = []
        /// See ``ClientRecord/requireDPoP``.
        public var requireDPoP: Bool = false
        /// See ``ClientRecord/resources``.
        public var resources: [String] = []
        /// See ``ClientRecord/fapi2`` and ``FAPI2Profile``.
        public var fapi2: Bool = false
        /// API scopes the client may ask for besides the OpenID ones (RFC 6749 §3.3), e.g. `accounts`.
        public var apiScopes: [String] = []
        /// See ``ClientRecord/facetIDs``.
        public var facetIDs: [String] = []
        /// See ``ClientRecord/authenticatorAAIDs``.
        public var authenticatorAAIDs: [String]?
        /// The client's own token lifetimes (``TokenLifetimes``); `nil`: the provider's.
        public var accessTokenLifetime: TimeInterval?
        public var idTokenLifetime: TimeInterval?
        public var refreshTokenIdleLifetime: TimeInterval?
        public var refreshTokenAbsoluteLifetime: TimeInterval?
        public var codeLifetime: TimeInterval?

        public init(
            id: String, name: String, authMethod: ClientRecord.AuthMethod, redirectURIs: [String], postLogoutRedirectURIs: [String] = [],
            jwks: String? = nil, jwksURI: String? = nil, allowsRefreshTokens: Bool = true, minimumACR: String? = nil, nativeLogin: Bool = false
        ) {
            self.minimumACR = minimumACR
            self.nativeLogin = nativeLogin
            self.id = id
            self.name = name
            self.authMethod = authMethod
            self.redirectURIs = redirectURIs
            self.postLogoutRedirectURIs = postLogoutRedirectURIs
            self.jwks = jwks
            self.jwksURI = jwksURI
            self.allowsRefreshTokens = allowsRefreshTokens
        }
    }

    /// Registers a client after checking it; returns the record and, for the secret methods, the secret (shown once).
    public func addClient(_ new: NewClient) async throws -> (ClientRecord, secret: String?) {
        var secret: String?
        if new.authMethod.usesSecret { secret = random.token() }
        let record = try Self.checkedRecord(new, secretHash: secret.map(SecretDigest.hex), createdAt: clock.now())
        try await store.insertClient(record)
        try await audit.record("client.added", clientID: record.id, actor: .admin)
        return (record, secret)
    }

    /// Replaces a registered client's whole registration (RFC 7592 §2.2), checked as a new one is.
    /// The secret stays while the method keeps using one; a change to a secret method makes a new
    /// one (returned, shown once); a change away from one drops it.
    public func replaceClient(_ new: NewClient) async throws -> (ClientRecord, secret: String?) {
        for _ in 0..<20 {
            guard let (stored, version) = try await store.clientForChange(id: new.id) else { throw SignetError(.notFound, "no client \(new.id)") }
            var secret: String?
            var secretHash = stored.secretHash
            if new.authMethod.usesSecret, !stored.authMethod.usesSecret || secretHash == nil {
                secret = random.token()
                secretHash = secret.map(SecretDigest.hex)
            }
            if !new.authMethod.usesSecret { secretHash = nil }
            var record = try Self.checkedRecord(new, secretHash: secretHash, createdAt: stored.createdAt)
            record.loginScenarios = stored.loginScenarios
            // Compare-and-swap, as ``updateClient(id:_:)``.
            guard try await store.replaceClient(record, ifVersion: version) else { continue }
            try await audit.record("client.updated", clientID: record.id, actor: .admin)
            return (record, secret)
        }
        throw SignetError(.conflict, "client \(new.id) kept changing; try again")
    }

    /// Checks a registration against every rule and builds its record.
    static func checkedRecord(_ new: NewClient, secretHash: String?, createdAt: Date) throws -> ClientRecord {
        // VSCHAR without space (RFC 6749 Appendix A.1): no control character reaches a page, a log or a terminal.
        guard !new.id.isEmpty, new.id.utf8.count <= 128, new.id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw SignetError(.invalidConfiguration, "a client id is 1–128 printable ASCII characters without spaces")
        }
        guard !new.redirectURIs.isEmpty else { throw SignetError(.invalidConfiguration, "a client needs at least one redirect URI") }
        for uri in new.redirectURIs + new.postLogoutRedirectURIs {
            if case .failure(let problem) = RedirectURI.classify(uri) {
                throw SignetError(.invalidConfiguration, "redirect URI \(uri) \(problem.rawValue)")
            }
        }
        if new.authMethod == .privateKeyJWT {
            guard (new.jwks == nil) != (new.jwksURI == nil) else {
                throw SignetError(.invalidConfiguration, "a private_key_jwt client needs exactly one of jwks or jwks_uri")
            }
            if let jwks = new.jwks {
                guard let set = try? JSONDecoder().decode(PublicJWKS.self, from: Data(jwks.utf8)), !set.keys.isEmpty else {
                    throw SignetError(.invalidConfiguration, "jwks must be a JSON Web Key Set with at least one key")
                }
                guard !jwks.contains("\"d\"") else { throw SignetError(.invalidConfiguration, "jwks must hold public keys only") }
            }
            if let uri = new.jwksURI, !uri.lowercased().hasPrefix("https://"), !(URL(string: uri)?.host.map(Loopback.isHost) ?? false) {
                throw SignetError(.invalidConfiguration, "jwks_uri must be https")
            }
        }
        try Self.checkMinimumACR(new.minimumACR)
        try Self.checkResources(new.resources)
        try Self.checkScopes(new.apiScopes)
        for url in new.appLaunchURLs {
            guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https", components.host?.isEmpty == false,
                components.fragment == nil
            else {
                throw SignetError(.invalidConfiguration, "app launch URL \(url) must be an https URL without a fragment")
            }
        }
        let record = ClientRecord(
            id: new.id, name: new.name, authMethod: new.authMethod, secretHash: secretHash,
            redirectURIs: new.redirectURIs, postLogoutRedirectURIs: new.postLogoutRedirectURIs, jwks: new.jwks,
            jwksURI: new.jwksURI, allowedScopes: Self.openIDScopes + new.apiScopes, allowsRefreshTokens: new.allowsRefreshTokens,
            minimumACR: new.minimumACR, nativeLogin: new.nativeLogin,
            requirePushedAuthorizationRequests: new.requirePushedAuthorizationRequests, requireSignedRequestObject: new.requireSignedRequestObject,
            appLaunchURLs: new.appLaunchURLs, requireDPoP: new.requireDPoP, resources: new.resources, fapi2: new.fapi2, createdAt: createdAt)
        try Self.checkFacetIDs(new.facetIDs)
        try Self.checkAAIDs(new.authenticatorAAIDs)
        var complete = record
        complete.facetIDs = new.facetIDs
        complete.authenticatorAAIDs = new.authenticatorAAIDs
        complete.accessTokenLifetime = new.accessTokenLifetime
        complete.idTokenLifetime = new.idTokenLifetime
        complete.refreshTokenIdleLifetime = new.refreshTokenIdleLifetime
        complete.refreshTokenAbsoluteLifetime = new.refreshTokenAbsoluteLifetime
        complete.codeLifetime = new.codeLifetime
        try Self.checkLifetimes(complete)
        try Self.checkProfile(complete)
        return complete
    }

    /// What `clients update` may change; `nil` leaves a setting as it is.
    public struct ClientChange: Sendable {
        public var name: String?
        /// `.some(nil)` removes the minimum.
        public var minimumACR: String??
        public var nativeLogin: Bool?
        public var requirePushedAuthorizationRequests: Bool?
        public var requireSignedRequestObject: Bool?
        public var requireDPoP: Bool?
        /// Replaces the client's resources (RFC 8707) when given.
        public var resources: [String]?
        /// Turns the FAPI 2.0 profile on or off (``FAPI2Profile``).
        public var fapi2: Bool?
        /// Replaces the client's API scopes when given (the OpenID scopes stay).
        public var apiScopes: [String]?
        /// Replaces the client's trusted facet ids when given.
        public var facetIDs: [String]?
        /// Replaces the AAIDs the client accepts when given; `.some(nil)` accepts every one again.
        public var authenticatorAAIDs: [String]??
        /// The client's own token lifetimes, each when given; `.some(nil)` returns one to the provider's.
        public var accessTokenLifetime: TimeInterval??
        public var idTokenLifetime: TimeInterval??
        public var refreshTokenIdleLifetime: TimeInterval??
        public var refreshTokenAbsoluteLifetime: TimeInterval??
        public var codeLifetime: TimeInterval??

        public init(
            name: String? = nil, minimumACR: String?? = nil, nativeLogin: Bool? = nil, requirePushedAuthorizationRequests: Bool? = nil,
            requireSignedRequestObject: Bool? = nil, requireDPoP: Bool? = nil, resources: [String]? = nil, fapi2: Bool? = nil,
            apiScopes: [String]? = nil,
            facetIDs: [String]? = nil, authenticatorAAIDs: [String]?? = nil
        ) {
            self.facetIDs = facetIDs
            self.authenticatorAAIDs = authenticatorAAIDs
            self.fapi2 = fapi2
            self.apiScopes = apiScopes
            self.resources = resources
            self.requireDPoP = requireDPoP
            self.requireSignedRequestObject = requireSignedRequestObject
            self.name = name
            self.minimumACR = minimumACR
            self.nativeLogin = nativeLogin
            self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        }
    }

    /// Changes a registered client's settings.
    @discardableResult
    public func updateClient(id: String, _ change: ClientChange) async throws -> ClientRecord {
        // Compare-and-swap on the stored version, read again and retried when another change
        // came first, so neither is lost.
        for _ in 0..<20 {
            guard let (stored, version) = try await store.clientForChange(id: id) else { throw SignetError(.notFound, "no client \(id)") }
            let client = try Self.applying(change, to: stored)
            if try await store.replaceClient(client, ifVersion: version) {
                try await audit.record("client.updated", clientID: id, actor: .admin)
                return client
            }
        }
        throw SignetError(.conflict, "client \(id) kept changing; try again")
    }

    /// `stored` with `change` applied, every rule checked.
    static func applying(_ change: ClientChange, to stored: ClientRecord) throws -> ClientRecord {
        var client = stored
        if let name = change.name { client.name = name }
        if let minimumACR = change.minimumACR {
            try Self.checkMinimumACR(minimumACR)
            client.minimumACR = minimumACR
        }
        if let nativeLogin = change.nativeLogin { client.nativeLogin = nativeLogin }
        if let requirePAR = change.requirePushedAuthorizationRequests { client.requirePushedAuthorizationRequests = requirePAR }
        if let requireSigned = change.requireSignedRequestObject { client.requireSignedRequestObject = requireSigned }
        if let requireDPoP = change.requireDPoP { client.requireDPoP = requireDPoP }
        if let resources = change.resources {
            try Self.checkResources(resources)
            client.resources = resources
        }
        if let fapi2 = change.fapi2 { client.fapi2 = fapi2 }
        if let facetIDs = change.facetIDs {
            try Self.checkFacetIDs(facetIDs)
            client.facetIDs = facetIDs
        }
        if let aaids = change.authenticatorAAIDs {
            try Self.checkAAIDs(aaids)
            client.authenticatorAAIDs = aaids
        }
        if let apiScopes = change.apiScopes {
            try Self.checkScopes(apiScopes)
            client.allowedScopes = client.allowedScopes.filter(Self.openIDScopes.contains) + apiScopes
        }
        if let lifetime = change.accessTokenLifetime { client.accessTokenLifetime = lifetime }
        if let lifetime = change.idTokenLifetime { client.idTokenLifetime = lifetime }
        if let lifetime = change.refreshTokenIdleLifetime { client.refreshTokenIdleLifetime = lifetime }
        if let lifetime = change.refreshTokenAbsoluteLifetime { client.refreshTokenAbsoluteLifetime = lifetime }
        if let lifetime = change.codeLifetime { client.codeLifetime = lifetime }
        try Self.checkLifetimes(client)
        try Self.checkProfile(client)
        return client
    }

    /// Removes a client; its grants stop working with it.
    public func removeClient(id: String) async throws {
        guard try await store.deleteClient(id: id) else { throw SignetError(.notFound, "no client \(id)") }
        try await audit.record("client.removed", clientID: id, actor: .admin)
    }

    /// The assurance levels a client may require.
    public static let assuranceLevels = [AuthorizationRequestValidator.acrOneFactor, AuthorizationRequestValidator.acrTwoFactors]

    /// The scopes every client may ask for.
    static let openIDScopes = AuthorizationRequestValidator.supportedScopes

    /// API scopes are scope-tokens (RFC 6749 §3.3: printable ASCII but space, `"` and `\`) of at
    /// most 64 characters, and not one of the OpenID scopes.
    static func checkScopes(_ scopes: [String]) throws {
        for scope in scopes {
            guard !scope.isEmpty, scope.utf8.count <= 64,
                scope.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" })
            else {
                throw SignetError(
                    .invalidConfiguration,
                    "scope \(scope) must be 1–64 printable ASCII characters without spaces, quotes or backslashes (RFC 6749 §3.3)")
            }
            guard !openIDScopes.contains(scope) else { throw SignetError(.invalidConfiguration, "\(scope) is an OpenID scope every client has") }
        }
    }

    /// Facet ids are `ios:bundle-id:…`, `android:apk-key-hash:…` or https origins (FIDO AppID and Facet §3).
    static func checkFacetIDs(_ facetIDs: [String]) throws {
        for facet in facetIDs {
            let valid: Bool
            if facet.hasPrefix("ios:bundle-id:") || facet.hasPrefix("android:apk-key-hash:") {
                let rest = facet.split(separator: ":", maxSplits: 2).last ?? ""
                valid = !rest.isEmpty && rest.count <= 200 && rest.allSatisfy { $0.isASCII && !$0.isWhitespace }
            } else if let url = URLComponents(string: facet), url.scheme == "https", url.host?.isEmpty == false, url.path.isEmpty, url.query == nil {
                valid = true
            } else {
                valid = false
            }
            guard valid else {
                throw SignetError(
                    .invalidConfiguration,
                    "facet id \(facet) must be ios:bundle-id:ID, android:apk-key-hash:HASH or an https origin (FIDO AppID and Facet)")
            }
        }
    }

    /// The AAIDs a client accepts must be ones Signet knows (``AuthenticatorCatalog``).
    static func checkAAIDs(_ aaids: [String]?) throws {
        guard let aaids else { return }
        guard !aaids.isEmpty else { throw SignetError(.invalidConfiguration, "give at least one AAID, or none to accept every authenticator") }
        for aaid in aaids where AuthenticatorCatalog.kind(aaid) == nil {
            throw SignetError(.invalidConfiguration, "unknown AAID \(aaid); known: \(AuthenticatorCatalog.all.map(\.aaid).joined(separator: ", "))")
        }
    }

    /// Resource indicators are absolute URIs without a fragment (RFC 8707 §2).
    static func checkResources(_ resources: [String]) throws {
        for resource in resources {
            guard let url = URLComponents(string: resource), url.scheme != nil, url.fragment == nil else {
                throw SignetError(.invalidConfiguration, "resource \(resource) must be an absolute URI without a fragment (RFC 8707)")
            }
        }
    }

    /// A client's own token lifetimes must be within ``TokenLifetimes/limits``.
    static func checkLifetimes(_ client: ClientRecord) throws {
        if let problem = TokenLifetimes.problems(of: client).first { throw SignetError(.invalidConfiguration, problem) }
    }

    /// A client flagged `fapi2` must fit the profile (``FAPI2Profile/registrationProblems(_:)``).
    static func checkProfile(_ client: ClientRecord) throws {
        if let problem = FAPI2Profile.registrationProblems(client).first { throw SignetError(.invalidConfiguration, problem) }
    }

    static func checkMinimumACR(_ value: String?) throws {
        guard let value else { return }
        guard assuranceLevels.contains(value) else {
            throw SignetError(.invalidConfiguration, "min_acr must be one of \(assuranceLevels.joined(separator: ", "))")
        }
    }

    /// Registers a user; the username is stored in lower case.
    @discardableResult
    public func addUser(username: String, password: String, name: String? = nil, email: String? = nil, phoneNumber: String? = nil) async throws
        -> UserRecord
    {
        let normalized = username.trimmingCharacters(in: .whitespaces).lowercased()
        guard !normalized.isEmpty, normalized.utf8.count <= 128 else { throw SignetError(.invalidConfiguration, "a username is 1–128 characters") }
        // Listed in terminals and pages: a control character could fake a row or colour the screen.
        guard DisplayedText.isIdentifier(normalized) else {
            throw SignetError(.invalidConfiguration, "a username has no control, direction or invisible characters")
        }
        guard PasswordHasher.isAcceptable(password) else { throw SignetError(.invalidConfiguration, "a password is 1–72 bytes") }
        // An empty value is none, as in a change (where it removes one).
        let (name, email, phoneNumber) = (name.flatMap(Self.nonEmpty), email.flatMap(Self.nonEmpty), phoneNumber.flatMap(Self.nonEmpty))
        try Self.checkUserChange(UserChange(name: name, email: email, phoneNumber: phoneNumber))
        let user = UserRecord(
            id: UUID().uuidString.lowercased(), username: normalized, passwordHash: try await passwords.hash(password), name: name,
            email: email, phoneNumber: phoneNumber, securityStamp: random.token(byteCount: 16), createdAt: clock.now())
        try await store.insertUser(user)
        try await audit.record("user.added", userID: user.id, actor: .admin)
        return user
    }

    /// What `users update` may change; `nil` leaves it, an empty string removes it.
    public struct UserChange: Sendable, Equatable {
        public var name: String?
        public var email: String?
        public var phoneNumber: String?
        public init(name: String? = nil, email: String? = nil, phoneNumber: String? = nil) {
            (self.name, self.email, self.phoneNumber) = (name, email, phoneNumber)
        }
    }

    /// Changes a user's profile. A new phone number ends what was signed in with the old one
    /// (the second factor changed), as a new password does.
    @discardableResult
    public func updateUser(username: String, _ change: UserChange) async throws -> UserRecord {
        try Self.checkUserChange(change)
        let user = try await changeUser(username) { user in
            if let name = change.name { user.name = name.isEmpty ? nil : name }
            if let email = change.email { user.email = email.isEmpty ? nil : email }
            if let phone = change.phoneNumber { user.phoneNumber = phone.isEmpty ? nil : phone }
        }
        if change.phoneNumber != nil { try await revokeAccess(userID: user.id) }
        try await audit.record("user.updated", userID: user.id, actor: .admin)
        return user
    }

    /// Checks a profile change: E.164 phone numbers, email addresses with an @.
    public static func checkUserChange(_ change: UserChange) throws {
        if let phone = change.phoneNumber, !phone.isEmpty,
            !(phone.hasPrefix("+") && phone.utf8.dropFirst().allSatisfy({ (0x30...0x39).contains($0) }) && (8...16).contains(phone.utf8.count))
        {
            throw SignetError(.invalidConfiguration, "a phone number is in E.164 form, e.g. +4512345678")
        }
        if let email = change.email, !email.isEmpty, !(email.contains("@") && email.utf8.count <= 254) {
            throw SignetError(.invalidConfiguration, "an email address has an @ and at most 254 characters")
        }
        if let name = change.name, name.utf8.count > 200 { throw SignetError(.invalidConfiguration, "a name is at most 200 bytes") }
        if let email = change.email, !DisplayedText.isIdentifier(email) {
            throw SignetError(.invalidConfiguration, "an email address has no control, direction or invisible characters")
        }
        if let name = change.name, !DisplayedText.isName(name) {
            throw SignetError(.invalidConfiguration, "a name has no control or direction characters")
        }
    }

    /// An empty value given for a new user is none, as in a change (where it removes one).
    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    /// Replaces a user's password and ends everything signed in with the old one.
    public func setPassword(username: String, password: String) async throws {
        guard PasswordHasher.isAcceptable(password) else { throw SignetError(.invalidConfiguration, "a password is 1–72 bytes") }
        let hash = try await passwords.hash(password)
        let user = try await changeUser(username) { $0.passwordHash = hash }
        try await revokeAccess(userID: user.id)
        try await audit.record("user.password_set", userID: user.id, actor: .admin)
    }

    /// Locks or unlocks a user. Locking ends every session, grant, refresh token and remember token.
    public func setLocked(username: String, _ locked: Bool) async throws {
        let user = try await changeUser(username) { $0.locked = locked }
        if locked { try await revokeAccess(userID: user.id) }
        try await audit.record(locked ? "user.locked" : "user.unlocked", userID: user.id, actor: .admin)
    }

    /// Applies `change` to the stored user with a fresh security stamp, by compare-and-swap on
    /// the old stamp (read again and retried when another change came first, so none is lost).
    private func changeUser(_ username: String, _ change: (inout UserRecord) -> Void) async throws -> UserRecord {
        for _ in 0..<20 {
            guard let stored = try await store.user(username: username.lowercased()) else {
                throw SignetError(.notFound, "no user named \(username)")
            }
            var changed = stored
            change(&changed)
            changed.securityStamp = random.token(byteCount: 16)
            if try await store.replaceUser(changed, expectedStamp: stored.securityStamp) { return changed }
        }
        throw SignetError(.conflict, "the user \(username) kept changing; try again")
    }

    /// Removes a user and ends everything they were signed in to.
    public func removeUser(username: String) async throws {
        guard let user = try await store.user(username: username.lowercased()), try await store.deleteUser(id: user.id) else {
            throw SignetError(.notFound, "no user named \(username)")
        }
        try await revokeAccess(userID: user.id)
        try await audit.record("user.removed", userID: user.id, actor: .admin)
    }

    /// Ends a user's browser sessions and revokes their grants (with every refresh token) and remember tokens.
    public func revokeAccess(userID: String) async throws {
        _ = try await store.deleteSessions(userID: userID)
        _ = try await store.revokeGrants(userID: userID, at: clock.now())
        _ = try await store.deleteRememberTokens(userID: userID)
    }

    /// Revokes every Remember-User-ID token of a user; returns how many there were.
    public func forgetDevices(username: String) async throws -> Int {
        guard let user = try await store.user(username: username.lowercased()) else { throw SignetError(.notFound, "no user named \(username)") }
        let count = try await store.deleteRememberTokens(userID: user.id)
        try await audit.record("user.remember_tokens_revoked", userID: user.id, actor: .admin)
        return count
    }

    /// Rotates the signing keys (see ``KeyRotation``).
    public func rotateKeys(configuration: SignetConfiguration) async throws -> String {
        let publication = configuration.retiredKeyPublicationTime(clients: try await store.listClients())
        let keyID = try await KeyRotation.rotate(keys: store, replays: store, now: clock.now(), retiredKeyPublicationTime: publication)
        try await audit.record("keys.rotated", actor: .admin, target: keyID)
        return keyID
    }
}
