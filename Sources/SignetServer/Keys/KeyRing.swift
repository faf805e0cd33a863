// The provider's signing keys in memory: signs tokens, verifies its own, publishes the JWKS.
import Crypto
import Foundation
import JWTKit
import SignetCore
import SignetJOSE
import SignetStore

/// The shared registry of signing keys, reread from storage so rotations by
/// another process (or `signet keys rotate`) are picked up.
public actor KeyRing {
    private let store: any SigningKeyStore
    private let clock: SignetClock
    private let refreshInterval: TimeInterval
    /// The published keys' public halves, for verifying this provider's own tokens.
    private var collection = JWTKeyCollection()
    /// The active key's signer, with the headers made so far.
    private var signer: ES256TokenSigner?
    private var publishedKeys: [PublicJWK] = []
    private var publishedKIDs: Set<String> = []
    private var loadedAt: Date?

    public init(store: any SigningKeyStore, clock: SignetClock, refreshInterval: TimeInterval) {
        self.store = store
        self.clock = clock
        self.refreshInterval = refreshInterval
    }

    /// Makes sure there is an active key and a next one, creating them on first start.
    public func prepare() async throws {
        let keys = try await store.signingKeys()
        if !keys.contains(where: { $0.status == .active }) {
            try await store.insertSigningKey(SigningKeyFactory.make(status: .active, now: clock.now()))
        }
        if !keys.contains(where: { $0.status == .next }) {
            try await store.insertSigningKey(SigningKeyFactory.make(status: .next, now: clock.now()))
        }
        try await reload()
    }

    /// Rereads the keys from storage.
    public func reload() async throws {
        let now = clock.now()
        let records = try await store.signingKeys().filter { $0.publishUntil.map { $0 > now } ?? true }
        let fresh = JWTKeyCollection()
        var published: [PublicJWK] = []
        var activeSigner: ES256TokenSigner?
        for record in records {
            let key = try SigningKeyFactory.privateKey(pem: record.privateKeyPEM)
            // Public keys only: signing goes through `ES256TokenSigner`, so jwt-kit needs no private key.
            await fresh.add(ecdsa: try ES256PublicKey(backing: key.publicKey), kid: JWKIdentifier(string: record.kid))
            published.append(PublicJWK(p256: key.publicKey, kid: record.kid))
            if record.status == .active {
                activeSigner = ES256TokenSigner(kid: record.kid, key: key)
            }
        }
        // Overlapping reloads may finish out of order: keep the newest snapshot.
        if let loadedAt, loadedAt > now { return }
        collection = fresh
        publishedKeys = published
        publishedKIDs = Set(published.compactMap(\.kid))
        if signer?.kid != activeSigner?.kid { signer = activeSigner }
        loadedAt = now
    }

    /// Whether a key to sign with is loaded (readiness).
    public var hasActiveKey: Bool { signer != nil }

    /// The `kid` tokens are signed with now, as last read from the store.
    public var activeKeyID: String? { signer?.kid }

    private func refreshIfStale() async throws {
        if let loadedAt, clock.now().timeIntervalSince(loadedAt) < refreshInterval { return }
        try await reload()
    }

    /// The public keys to publish at the JWKS endpoint: next, active and retired ones.
    public func jwks() async throws -> PublicJWKS {
        try await refreshIfStale()
        return PublicJWKS(keys: publishedKeys)
    }

    /// Signs a claim set with the active key, with `typ` in the header (`JWT`, `at+jwt`).
    /// The signing itself runs outside the actor, so parallel requests sign in parallel.
    public nonisolated func sign(_ payload: some JWTPayload, type: String) async throws -> String {
        try await activeSigner(for: type).sign(payload, type: type)
    }

    /// The same for claims written without `Codable`: the token endpoint's (``JSONObjectWritable``).
    public nonisolated func sign(_ payload: some JWTPayload & JSONObjectWritable, type: String) async throws -> String {
        try await activeSigner(for: type).sign(payload, type: type)
    }

    private func activeSigner(for type: String) async throws -> ES256TokenSigner {
        try await refreshIfStale()
        guard let current = signer else { throw SignetError(.keyFailure, "no active signing key") }
        let prepared = try current.preparing(type: type)
        signer = prepared
        return prepared
    }

    /// Verifies a token this provider signed: the structure of ``CompactJWT/parse(_:)`` (no repeated
    /// member names), ES256, a published `kid`, the expected `typ`, and the signature.
    /// Claims are left to the caller. `nil` when any check fails.
    public func verifyOwn<Payload: JWTPayload>(_ token: String, as type: Payload.Type, expectedType: String?) async -> Payload? {
        guard case .success(let jwt) = CompactJWT.parse(token) else { return nil }
        let header = jwt.header
        guard header.alg == "ES256", let kid = header.kid else { return nil }
        if let expectedType, header.typ?.lowercased() != expectedType.lowercased() { return nil }
        // An unknown kid rereads the keys at most every 10 s, so forged kids cannot hammer the store.
        if !publishedKIDs.contains(kid), loadedAt.map({ clock.now().timeIntervalSince($0) >= 10 }) ?? true { try? await reload() }
        guard publishedKIDs.contains(kid) else { return nil }
        return try? await collection.verify(token, as: Payload.self)
    }
}

/// Makes and reads the provider's ES256 keys.
public enum SigningKeyFactory {
    /// A fresh P-256 key record; its `kid` is the RFC 7638 thumbprint of the public key.
    public static func make(status: SigningKeyRecord.Status, now: Date) -> SigningKeyRecord {
        let key = P256.Signing.PrivateKey()
        return SigningKeyRecord(kid: thumbprint(of: key.publicKey), privateKeyPEM: key.pemRepresentation, status: status, createdAt: now)
    }

    /// Reads a PEM private key.
    public static func privateKey(pem: String) throws -> P256.Signing.PrivateKey {
        do { return try P256.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw SignetError(.keyFailure, "a stored signing key is not a P-256 PEM key")
        }
    }

    /// The JWK thumbprint of a P-256 key — RFC 7638 (one implementation: ``JWKThumbprint``).
    public static func thumbprint(of key: P256.Signing.PublicKey) -> String {
        let jwk = PublicJWK(p256: key, kid: "")
        return JWKThumbprint.sha256(of: ["kty": "EC", "crv": "P-256", "x": jwk.x ?? "", "y": jwk.y ?? ""]) ?? ""
    }
}
