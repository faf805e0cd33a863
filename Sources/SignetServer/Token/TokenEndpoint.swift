// POST /token — RFC 6749 §3.2, §4.1.3, §6; OIDC Core §3.1.3.
import Foundation
import Hummingbird
import Logging
import SignetCore
import SignetStore

/// The token endpoint: the authorization_code and refresh_token grants.
struct TokenEndpoint: Sendable {
    let server: ServerContext
    let grants: any GrantStore
    let users: any UserStore
    /// Where a device's grant is bound and its use recorded.
    let deviceStore: any DeviceStore
    let minter: TokenMinter
    let audit: AuditTrail
    let authenticator: ClientAuthenticator
    let dpop: DPoPProofVerifier
    let devices: DeviceIdentification
    let maxBodySize: Int
    let maxParameterLength: Int

    func handle(_ request: Request, context: SignetRequestContext) async throws -> Response {
        do {
            return try await answer(request, context: context)
        } catch let error as OAuthHTTPError {
            server.metrics.tokenError(error.error.error.rawValue)
            throw error
        }
    }

    private func answer(_ request: Request, context: SignetRequestContext) async throws -> Response {
        let parameters = try await RequestParameters.form(request, maxBodySize: maxBodySize)
        // resource may be repeated (RFC 8707 §2); nothing else may.
        if let duplicated = parameters.duplicatedNames.first(where: { $0 != OAuthParameter.resource }) {
            throw OAuthHTTPError.invalidRequest("\(duplicated.prefix(64)) must not be repeated")
        }
        if let oversized = parameters.pairs.first(where: { $0.value.utf8.count > maxParameterLength }) {
            throw OAuthHTTPError.invalidRequest("\(oversized.name.prefix(64)) is too long")
        }
        let endpoint = server.endpoint("/token")
        // RFC 9449: a proof of possession binds what is issued to its key. Checked before the
        // client's assertion, so a request sent again with a server nonce has spent nothing.
        let proof = try await dpop.proof(of: request, at: endpoint)
        let client = try await authenticator.authenticate(request, parameters: parameters, endpoints: [endpoint])
        context.facts.clientID = client.id
        try FAPI2Profile.checkProof(proof, client: client)
        guard let grantType = parameters[OAuthParameter.grantType], !grantType.isEmpty else {
            throw OAuthHTTPError.invalidRequest("grant_type is missing")
        }
        // RFC 8705 §3: the certificate of an activated device binds what is issued to it.
        var device: AuthenticatedDevice?
        if case .device(let presented) = try await devices.identify(request, context: context) { device = presented }
        let tokens: TokenResponse
        switch grantType {
        case "authorization_code":
            tokens = try await redeemCode(parameters, client: client, proof: proof, device: device)
        case "refresh_token":
            guard client.allowsRefreshTokens else {
                throw OAuthHTTPError(.badRequest, .unauthorizedClient, "this client may not use refresh tokens")
            }
            tokens = try await refresh(parameters, client: client, proof: proof, device: device)
        default:
            throw OAuthHTTPError(.badRequest, .unsupportedGrantType, "grant_type \(grantType.prefix(64)) is not supported")
        }
        return JSONResponse.make(tokens)
    }

    /// RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.6): single use, bound to client, redirect URI and challenge.
    private func redeemCode(_ parameters: FormParameters, client: ClientRecord, proof: DPoPProof?, device: AuthenticatedDevice?) async throws
        -> TokenResponse
    {
        guard let code = parameters[OAuthParameter.code], !code.isEmpty else { throw OAuthHTTPError.invalidRequest("code is missing") }
        guard let redirectURI = parameters[OAuthParameter.redirectURI] else { throw OAuthHTTPError.invalidRequest("redirect_uri is missing") }
        guard let verifier = parameters[OAuthParameter.codeVerifier] else {
            throw OAuthHTTPError.invalidRequest("code_verifier is missing (PKCE is required)")
        }
        guard PKCE.isWellFormedVerifier(verifier) else {
            throw OAuthHTTPError.invalidRequest("code_verifier must be 43 to 128 unreserved characters")
        }
        let now = server.now()
        let hash = SecretDigest.hex(code)
        // Check everything before spending the code, so a refused request (a thief without the
        // verifier, a typo in redirect_uri) cannot burn it for the rightful client.
        guard let (stored, storedGrant) = try await grants.codeWithGrant(hash: hash) else { throw OAuthHTTPError.invalidGrant("the code is invalid") }
        if stored.redeemedAt == nil {
            guard stored.expiresAt > now else { throw OAuthHTTPError.invalidGrant("the code has expired") }
            guard stored.clientID == client.id else { throw OAuthHTTPError.invalidGrant("the code was issued to another client") }
            guard stored.redirectURI == redirectURI else {
                throw OAuthHTTPError.invalidGrant("redirect_uri does not match the authorization request")
            }
            guard PKCE.verify(verifier: verifier, challenge: stored.codeChallenge) else {
                throw OAuthHTTPError.invalidGrant("code_verifier does not match the code_challenge")
            }
            if let bound = stored.dpopJKT, bound != proof?.jkt {
                throw OAuthHTTPError.invalidGrant("the code is bound to another DPoP key (dpop_jkt)")
            }
            // The resources asked for, and a device login's certificate, are checked before the code
            // is spent too, so a request without them cannot burn the device's code.
            if let grant = storedGrant {
                if parameters[OAuthParameter.resource] != nil { _ = try Self.audiences(parameters, grant: grant, client: client) }
                try requireDeviceCertificate(grant, presented: device)
            }
        }
        let record: AuthorizationCodeRecord
        let spent = try await grants.redeemCodeWithGrant(hash: hash, at: now)
        switch spent.redemption {
        case .unknown:
            throw OAuthHTTPError.invalidGrant("the code is invalid")
        case .alreadyUsed(let grantID):
            // RFC 6749 §4.1.2: a code used twice revokes every token issued from it; only its own
            // client's replay counts, so another client holding a used code cannot end the grant.
            guard stored.clientID == client.id else { throw OAuthHTTPError.invalidGrant("the code was issued to another client") }
            // And only a replay that could have redeemed it: its redirect URI and PKCE verifier.
            // A public client's id proves nothing, and codes travel in URLs (history, logs): a
            // used code alone must not end its user's sign-in.
            guard stored.redirectURI == redirectURI, PKCE.verify(verifier: verifier, challenge: stored.codeChallenge) else {
                throw OAuthHTTPError.invalidGrant("the code was already used")
            }
            try await revokeAfterReplay(grantID: grantID, client: client, at: now, event: "code.replayed", what: "authorization code replayed")
            throw OAuthHTTPError.invalidGrant("the code was already used")
        case .redeemed(let redeemed):
            record = redeemed
        }
        // The grant as it stood when the code was spent (read in the same step): one revoked by
        // then is refused, whenever that was. A replay of the code can revoke it only after this
        // spend; this request still answers, and the tokens it issues are born revoked (their
        // refresh and userinfo are refused).
        guard let grant = spent.grant, grant.revokedAt == nil else {
            throw OAuthHTTPError.invalidGrant("the grant was revoked")
        }
        try requireMinimumAssurance(grant, client: client)
        let user = try Self.liveUser(spent.user, of: grant)
        let audiences = try Self.audiences(parameters, grant: grant, client: client)
        let boundDevice = try await deviceBinding(grant, client: client, presented: device)
        let tokens = try await minter.mint(
            grant: grant, client: client, user: user, scope: grant.scope, nonce: record.nonce, dpopJKT: proof?.jkt, device: boundDevice,
            audiences: audiences)
        return try await issued(tokens, grantType: "authorization_code", client: client, userID: user.id, grantID: grant.id)
    }

    /// RFC 6749 §6 with rotation: each refresh token works once; a reused one revokes its family.
    /// A FAPI 2.0 client's refresh token is not rotated (``ClientRecord/rotatesRefreshTokens``):
    /// it works until it expires or its grant is revoked, and no new one is issued.
    private func refresh(_ parameters: FormParameters, client: ClientRecord, proof: DPoPProof?, device: AuthenticatedDevice?) async throws
        -> TokenResponse
    {
        guard let token = parameters[OAuthParameter.refreshToken], !token.isEmpty else {
            throw OAuthHTTPError.invalidRequest("refresh_token is missing")
        }
        let now = server.now()
        let hash = SecretDigest.hex(token)
        // Requests that are wrong on their face are refused before the token is spent.
        let read = try await grants.refreshTokenWithGrant(hash: hash)
        let stored = read?.token
        if let stored, stored.usedAt == nil {
            guard stored.clientID == client.id else { throw OAuthHTTPError.invalidGrant("the refresh token was issued to another client") }
            if let bound = stored.dpopJKT, bound != proof?.jkt {
                throw OAuthHTTPError.invalidGrant("the refresh token is bound to another DPoP key")
            }
            if let grant = read?.grant {
                _ = try narrowedScope(parameters[OAuthParameter.scope], granted: grant.scope)
                _ = try Self.audiences(parameters, grant: grant, client: client)
                // A device's grant is refreshed only with its certificate: a refresh token copied off the phone is spent for nothing.
                try requireDeviceCertificate(grant, presented: device)
            }
        }
        let record: RefreshTokenRecord
        let spentGrant: GrantRecord?
        // The grant's user as it stood at the spend, or, unrotated, as read just after the grant.
        let spentUser: UserRecord?
        if !client.rotatesRefreshTokens {
            // Revoking a grant spends its refresh tokens, so an unspent one is still live.
            guard let stored, stored.usedAt == nil else { throw OAuthHTTPError.invalidGrant("the refresh token is invalid or was revoked") }
            record = stored
            spentGrant = read?.grant
            if let grant = spentGrant { spentUser = try await users.user(id: grant.userID) } else { spentUser = nil }
        } else {
            let spent = try await grants.useRefreshTokenWithGrant(hash: hash, at: now)
            spentGrant = spent.grant
            spentUser = spent.user
            switch spent.redemption {
            case .unknown:
                throw OAuthHTTPError.invalidGrant("the refresh token is invalid")
            case .alreadyUsed(let grantID):
                // Only its own client's reuse counts. The token names its client, so its grant is
                // not read: a grant that cannot be read is revoked all the same. Tokens of a revoked
                // grant are spent too; only a live family's reuse is an alarm.
                guard let stored, stored.clientID == client.id else { throw OAuthHTTPError.invalidGrant("the refresh token is invalid") }
                // A DPoP-bound token's reuse counts only with a proof of its key: a copy taken
                // without the key must not end the family.
                if let bound = stored.dpopJKT, bound != proof?.jkt {
                    throw OAuthHTTPError.invalidGrant("the refresh token is bound to another DPoP key")
                }
                // And a device's grant only with the device's certificate, as a refresh needs. The
                // read before the spend gives no grant for a spent token; one that cannot be read
                // at all is revoked all the same (above).
                if let grant = try? await grants.grant(id: grantID) { try requireDeviceCertificate(grant, presented: device) }
                try await revokeAfterReplay(grantID: grantID, client: client, at: now, event: "refresh.reused", what: "spent refresh token used")
                throw OAuthHTTPError.invalidGrant("the refresh token was already used or revoked")
            case .redeemed(let redeemed):
                record = redeemed
            }
        }
        guard record.clientID == client.id else { throw OAuthHTTPError.invalidGrant("the refresh token was issued to another client") }
        guard record.expiresAt > now else { throw OAuthHTTPError.invalidGrant("the refresh token has expired") }
        // As with codes: the grant as it stood at the spend (or, unrotated, as read with the
        // token), refused once revoked; a reuse racing this rotation can revoke the family only after it.
        guard let grant = spentGrant, grant.revokedAt == nil, grant.expiresAt > now else {
            throw OAuthHTTPError.invalidGrant("the grant was revoked or has expired")
        }
        let scope = try narrowedScope(parameters[OAuthParameter.scope], granted: grant.scope)
        try requireMinimumAssurance(grant, client: client)
        let user = try Self.liveUser(spentUser, of: grant)
        let audiences = try Self.audiences(parameters, grant: grant, client: client)
        let boundDevice = try await deviceBinding(grant, client: client, presented: device)
        let tokens = try await minter.mint(
            grant: grant, client: client, user: user, scope: scope, nonce: nil, dpopJKT: proof?.jkt, device: boundDevice, audiences: audiences,
            newRefreshToken: client.rotatesRefreshTokens)
        return try await issued(tokens, grantType: "refresh_token", client: client, userID: user.id, grantID: grant.id)
    }

    /// Revokes the grant of a replayed code or a reused refresh token (and so its refresh
    /// tokens). The alarm, `event` at warning, only when the grant was live until now; replays
    /// of a grant already revoked (by its user, an administrator or an earlier replay) are logged
    /// at info as `event` + `_again` (docs/logging.md). A revocation is an audit event too
    /// (`grant.revoked`, by the system, with `event` as its reason).
    private func revokeAfterReplay(grantID: String, client: ClientRecord, at now: Date, event: String, what: String) async throws {
        let wasLive = try await grants.revokeGrant(id: grantID, at: now)
        server.logger.log(
            level: wasLive ? .warning : .info, "\(what); grant \(wasLive ? "revoked" : "already revoked")",
            metadata: ["event": .string(wasLive ? event : event + "_again"), "client_id": .string(client.id)])
        guard wasLive else { return }
        // The user, when the grant can still be read (it is revoked, not removed); the event is recorded either way.
        let userID = try? await grants.grant(id: grantID)?.userID
        try await audit.record("grant.revoked", userID: userID, clientID: client.id, actor: .system, target: grantID, reason: event)
    }

    /// Counts what was issued and puts it in the audit trail (the grant id, never a token).
    private func issued(_ tokens: TokenResponse, grantType: String, client: ClientRecord, userID: String, grantID: String) async throws
        -> TokenResponse
    {
        server.metrics.issued("access_token", grantType: grantType, clientID: client.id)
        if tokens.idToken != nil { server.metrics.issued("id_token", grantType: grantType, clientID: client.id) }
        if tokens.refreshToken != nil { server.metrics.issued("refresh_token", grantType: grantType, clientID: client.id) }
        try await audit.record(
            grantType == "refresh_token" ? "token.refreshed" : "token.issued", userID: userID, clientID: client.id, actor: .client, target: grantID)
        return tokens
    }

    /// A grant tied to a device needs that device's current certificate (RFC 8705 §3); the
    /// device being revoked leaves the grant revoked, and an unrevoked device presents it.
    private func requireDeviceCertificate(_ grant: GrantRecord, presented: AuthenticatedDevice?) throws {
        guard let deviceID = grant.deviceID else { return }
        guard presented?.instanceID == deviceID else {
            throw OAuthHTTPError.invalidGrant("this grant belongs to a device: refresh with its certificate (mutual TLS)")
        }
    }

    /// The device the tokens are bound to: the presented one, when it is the grant's user's and
    /// client's (the grant is then tied to it); none without a certificate. A grant tied to a
    /// device is refreshed only by it, and a revoked device's grant no more.
    private func deviceBinding(_ grant: GrantRecord, client: ClientRecord, presented: AuthenticatedDevice?) async throws -> AuthenticatedDevice? {
        try requireDeviceCertificate(grant, presented: presented)
        guard let presented, presented.record.userID == grant.userID, presented.record.clientID == client.id else { return nil }
        guard try await deviceStore.bindGrant(id: grant.id, toDevice: presented.instanceID, replacing: nil) else {
            throw OAuthHTTPError.invalidGrant("this grant belongs to another device")
        }
        // Revoked between the certificate check and the binding: the revocation did not see this grant.
        guard try await deviceStore.device(instanceID: presented.instanceID)?.revokedAt == nil else {
            throw OAuthHTTPError.invalidGrant("the device was revoked")
        }
        try await deviceStore.touchDevice(instanceID: presented.instanceID, at: server.now())
        return presented
    }

    /// The access token's resources (RFC 8707 §2.2): those asked for here, within what the
    /// authorization request named (or, when it named none, what the client is registered for);
    /// else all the grant named; else the client's default (its first registered resource).
    static func audiences(_ parameters: FormParameters, grant: GrantRecord, client: ClientRecord) throws -> [String] {
        let requested = parameters.pairs.filter { $0.name == OAuthParameter.resource }.map(\.value)
        let granted = grant.resources ?? []
        if !requested.isEmpty {
            let allowed = granted.isEmpty ? client.resources : granted
            guard requested.allSatisfy(allowed.contains) else {
                throw OAuthHTTPError(.badRequest, .invalidTarget, "a resource asked for was not granted to this client")
            }
            return requested
        }
        if !granted.isEmpty { return granted }
        return client.resources.first.map { [$0] } ?? []
    }

    /// A client that now requires more assurance than the grant was signed in with must sign in again.
    private func requireMinimumAssurance(_ grant: GrantRecord, client: ClientRecord) throws {
        if !AssuranceLevel.satisfies(acr: grant.acr, requested: client.minimumACR.map { [$0] } ?? []) {
            throw OAuthHTTPError.invalidGrant("the client now requires a stronger sign-in than this grant had")
        }
    }

    /// The grant's user (`user`, as read for the grant), who must still exist, not be locked, and
    /// not have had a password change or lock since the grant was made (the security stamp it
    /// was made with).
    private static func liveUser(_ user: UserRecord?, of grant: GrantRecord) throws -> UserRecord {
        guard let user, user.id == grant.userID else { throw OAuthHTTPError.invalidGrant("the user no longer exists") }
        guard !user.locked, grant.userStamp == user.securityStamp else { throw OAuthHTTPError.invalidGrant("the user's sign-in was revoked") }
        return user
    }

    /// The scope of a refresh: the granted one, or a narrower one asked for (RFC 6749 §6).
    private func narrowedScope(_ requested: String?, granted: String) throws -> String {
        guard let requested else { return granted }
        let grantedScopes = Set(granted.split(separator: " "))
        let asked = requested.split(separator: " ")
        guard !asked.isEmpty, asked.allSatisfy(grantedScopes.contains) else {
            throw OAuthHTTPError(.badRequest, .invalidScope, "the scope may only narrow what was granted")
        }
        return asked.joined(separator: " ")
    }
}
