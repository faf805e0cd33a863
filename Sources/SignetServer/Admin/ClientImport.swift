// Clients as code: apply a list of registrations, all checked before any is written.
import Foundation
import SignetCore

/// Registers or replaces many clients at once (`signet clients import`).
public struct ClientImport: Sendable {
    let admin: SignetAdmin

    public init(admin: SignetAdmin) { self.admin = admin }

    /// What happened to one client.
    public struct Result: Sendable, Equatable {
        public var id: String
        public var replaced: Bool
        /// A new secret (for a new client with a secret method), shown once.
        public var secret: String?
    }

    /// Checks every client against every rule first (nothing is written if one fails), then adds
    /// the new ones and replaces the registered ones.
    public func apply(_ clients: [SignetAdmin.NewClient]) async throws -> [Result] {
        var existing: Set<String> = []
        for client in clients {
            _ = try SignetAdmin.checkedRecord(client, secretHash: nil, createdAt: Date())
            if try await admin.store.client(id: client.id) != nil { existing.insert(client.id) }
        }
        var results: [Result] = []
        for client in clients {
            if existing.contains(client.id) {
                let (_, secret) = try await admin.replaceClient(client)
                results.append(Result(id: client.id, replaced: true, secret: secret))
            } else {
                let (_, secret) = try await admin.addClient(client)
                results.append(Result(id: client.id, replaced: false, secret: secret))
            }
        }
        return results
    }
}
