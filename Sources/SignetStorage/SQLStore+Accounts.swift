// Clients, users and signing keys in SQL.
import Foundation
import SQLKit
import SignetCore
import SignetStore

extension SQLStore: ClientStore, UserStore, SigningKeyStore {
    public func client(id: String) async throws -> ClientRecord? {
        try record(ClientRecord.self, from: try await lookUps.raw("SELECT data FROM signet_clients WHERE id = \(bind: id)").first())
    }

    public func insertClient(_ client: ClientRecord) async throws {
        let inserted = try await writes.raw(
            "INSERT INTO signet_clients (id, data) VALUES (\(bind: client.id), \(bind: try Self.json(client))) ON CONFLICT DO NOTHING RETURNING id"
        ).first()
        guard inserted != nil else { throw SignetError(.conflict, "a client with id \(client.id) exists") }
    }

    public func listClients() async throws -> [ClientRecord] {
        try await listings.raw("SELECT data FROM signet_clients ORDER BY id").all().compactMap { try record(ClientRecord.self, from: $0) }
    }

    public func deleteClient(id: String) async throws -> Bool {
        try await writes.raw("DELETE FROM signet_clients WHERE id = \(bind: id) RETURNING id").first() != nil
    }

    public func replaceClient(_ client: ClientRecord) async throws -> Bool {
        try await writes.raw("UPDATE signet_clients SET data = \(bind: try Self.json(client)) WHERE id = \(bind: client.id) RETURNING id").first()
            != nil
    }

    public func clientForChange(id: String) async throws -> (client: ClientRecord, version: String)? {
        guard let row = try await lookUps.raw("SELECT data FROM signet_clients WHERE id = \(bind: id)").first() else { return nil }
        // The stored text itself is the version: any change writes other text.
        let text = try row.decode(column: "data", as: String.self)
        return (try decoded(ClientRecord.self, text), text)
    }

    public func replaceClient(_ client: ClientRecord, ifVersion version: String) async throws -> Bool {
        try await writes.raw(
            "UPDATE signet_clients SET data = \(bind: try Self.json(client)) WHERE id = \(bind: client.id) AND data = \(bind: version) RETURNING id"
        ).first() != nil
    }

    public func replaceUser(_ user: UserRecord, expectedStamp: String?) async throws -> Bool {
        // Stamps are random tokens, never empty, so COALESCE(…, '') compares "none" with "none".
        try await writes.raw(
            """
            UPDATE signet_users SET data = \(bind: try Self.json(user)), stamp = \(bind: user.securityStamp)
            WHERE id = \(bind: user.id) AND username = \(bind: user.username) AND COALESCE(stamp, '') = \(bind: expectedStamp ?? "") RETURNING id
            """
        ).first() != nil
    }

    public func user(id: String) async throws -> UserRecord? {
        try record(UserRecord.self, from: try await lookUps.raw("SELECT data FROM signet_users WHERE id = \(bind: id)").first())
    }

    public func user(username: String) async throws -> UserRecord? {
        try record(UserRecord.self, from: try await lookUps.raw("SELECT data FROM signet_users WHERE username = \(bind: username)").first())
    }

    public func insertUser(_ user: UserRecord) async throws {
        let inserted = try await writes.raw(
            "INSERT INTO signet_users (id, username, stamp, data) VALUES (\(bind: user.id), \(bind: user.username), \(bind: user.securityStamp), \(bind: try Self.json(user))) ON CONFLICT DO NOTHING RETURNING id"
        ).first()
        guard inserted != nil else { throw SignetError(.conflict, "a user named \(user.username) exists") }
    }

    public func listUsers() async throws -> [UserRecord] {
        try await listings.raw("SELECT data FROM signet_users ORDER BY username").all().compactMap { try record(UserRecord.self, from: $0) }
    }

    public func deleteUser(id: String) async throws -> Bool {
        try await writes.raw("DELETE FROM signet_users WHERE id = \(bind: id) RETURNING id").first() != nil
    }

    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await listings.raw("SELECT data FROM signet_signing_keys ORDER BY created_at, kid").all()
            .compactMap { try record(SigningKeyRecord.self, from: $0) }
    }

    public func insertSigningKey(_ key: SigningKeyRecord) async throws {
        try await writes.raw(
            "INSERT INTO signet_signing_keys (kid, created_at, data) VALUES (\(bind: key.kid), \(bind: Self.millis(key.createdAt)), \(bind: try Self.json(key))) ON CONFLICT DO NOTHING"
        ).run()
    }

    public func updateSigningKey(kid: String, status: SigningKeyRecord.Status, publishUntil: Date?, activatedAt: Date?) async throws {
        guard let row = try await lookUps.raw("SELECT data FROM signet_signing_keys WHERE kid = \(bind: kid)").first(),
            var key = try record(SigningKeyRecord.self, from: row)
        else { throw SignetError(.notFound, "no signing key \(kid)") }
        key.status = status
        key.publishUntil = publishUntil
        if let activatedAt { key.activatedAt = activatedAt }
        try await writes.raw("UPDATE signet_signing_keys SET data = \(bind: try Self.json(key)) WHERE kid = \(bind: kid)").run()
    }

    public func deleteSigningKey(kid: String) async throws {
        try await writes.raw("DELETE FROM signet_signing_keys WHERE kid = \(bind: kid)").run()
    }
}
