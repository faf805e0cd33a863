// The demo a first `signet serve` seeds: three clients, a user, and the files to use them.
import Foundation
import SignetCore

/// What was seeded, as written to `demo.json` in the data folder.
public struct DemoSeed: Sendable, Codable, Equatable {
    public var issuer: String
    public var nativeClientID: String
    public var nativeRedirectURI: String
    public var backendClientID: String
    public var backendRedirectURIs: [String]
    public var backendPrivateJWKPath: String
    public var postLogoutRedirectURI: String
    public var username: String
    public var password: String
    /// The FAPI 2.0 client (`fapi2`, same key as the backend); `nil` in data folders seeded before it existed.
    public var fapiClientID: String?
    public var fapiRedirectURI: String?
    /// The API the FAPI client's tokens are for (RFC 8707), the audience `signet demo --fapi` checks.
    public var fapiResource: String?
    /// The demo app's trusted UAF facet id (``ClientRecord/facetIDs``); `nil` in data folders seeded before it existed.
    public var facetID: String?

    enum CodingKeys: String, CodingKey {
        case issuer, username, password
        case fapiClientID = "fapi_client_id"
        case fapiRedirectURI = "fapi_redirect_uri"
        case fapiResource = "fapi_resource"
        case facetID = "facet_id"
        case nativeClientID = "native_client_id"
        case nativeRedirectURI = "native_redirect_uri"
        case backendClientID = "backend_client_id"
        case backendRedirectURIs = "backend_redirect_uris"
        case backendPrivateJWKPath = "backend_private_jwk_path"
        case postLogoutRedirectURI = "post_logout_redirect_uri"
    }

    /// Seeds the demo when the store has no clients; `nil` when it already had some.
    ///
    /// The demo user's password is random and written, with the backend's private key,
    /// into files only the owner can read.
    public static func seedIfEmpty(admin: SignetAdmin, issuer: String, dataDirectory: URL) async throws -> DemoSeed? {
        guard try await admin.store.listClients().isEmpty else { return nil }
        let keyPair = ClientKeyPair()
        var seed = DemoSeed(
            issuer: issuer, nativeClientID: "demo-app", nativeRedirectURI: "dev.signet.demo.app:/callback", backendClientID: "demo-backend",
            backendRedirectURIs: ["dev.signet.demo:/callback", "http://127.0.0.1/callback"],
            backendPrivateJWKPath: dataDirectory.appendingPathComponent("demo-backend.private.jwk.json").path,
            postLogoutRedirectURI: "dev.signet.demo:/signed-out", username: "demo", password: admin.random.token(byteCount: 12),
            fapiClientID: "demo-bank", fapiRedirectURI: "https://bank.example.com/callback", fapiResource: "https://api.bank.example.com")
        var app = SignetAdmin.NewClient(
            id: seed.nativeClientID, name: "Signet Demo App", authMethod: .none, redirectURIs: [seed.nativeRedirectURI],
            postLogoutRedirectURIs: ["dev.signet.demo.app:/signed-out"], nativeLogin: true)
        // The demo app activates devices (`signet device activate`, `signet demo --device`) and
        // registers authenticators from its facet (`signet authenticator enroll`).
        app.apiScopes = ["device"]
        seed.facetID = Self.demoFacetID
        app.facetIDs = [Self.demoFacetID]
        _ = try await admin.addClient(app)
        _ = try await admin.addClient(
            .init(
                id: seed.backendClientID, name: "Signet Demo Service", authMethod: .privateKeyJWT, redirectURIs: seed.backendRedirectURIs,
                postLogoutRedirectURIs: [seed.postLogoutRedirectURI, "http://127.0.0.1/signed-out"], jwks: keyPair.publicJWKS))
        var bank = SignetAdmin.NewClient(
            id: "demo-bank", name: "Signet Demo Bank", authMethod: .privateKeyJWT, redirectURIs: ["https://bank.example.com/callback"],
            jwks: keyPair.publicJWKS)
        bank.fapi2 = true
        bank.resources = ["https://api.bank.example.com"]
        bank.apiScopes = ["accounts"]
        _ = try await admin.addClient(bank)
        try await admin.addUser(
            username: seed.username, password: seed.password, name: "Demo User", email: "demo@example.com", phoneNumber: "+4512345678")
        try writePrivate(
            JSONSerialization.data(withJSONObject: keyPair.privateJWK, options: [.sortedKeys, .prettyPrinted]), to: seed.backendPrivateJWKPath)
        try seed.save(dataDirectory: dataDirectory)
        return seed
    }

    /// The facet id `signet authenticator` plays (an iOS app's bundle id).
    public static let demoFacetID = "ios:bundle-id:dev.signet.demo.app"

    /// Writes the seed as `demo.json` in a data folder, readable by its owner only.
    public func save(dataDirectory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let path = dataDirectory.appendingPathComponent("demo.json").path
        try? FileManager.default.removeItem(atPath: path)
        try Self.writePrivate(encoder.encode(self), to: path)
    }

    /// Reads `demo.json` from a data folder.
    public static func load(dataDirectory: URL) throws -> DemoSeed {
        let url = dataDirectory.appendingPathComponent("demo.json")
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw SignetError(.notFound, "no demo.json in \(dataDirectory.path): start `signet serve` once with demo data first")
        }
        return try JSONDecoder().decode(DemoSeed.self, from: data)
    }

    static func writePrivate(_ data: Data, to path: String) throws {
        do { try PrivateFile.write(data, to: path) } catch {
            throw SignetError(.invalidConfiguration, "cannot write \(path): \(error)")
        }
    }

    /// The demo backend's private key, read from ``backendPrivateJWKPath``.
    public func backendKey() throws -> ClientKeyPair {
        guard let data = FileManager.default.contents(atPath: backendPrivateJWKPath),
            let jwk = try JSONSerialization.jsonObject(with: data) as? [String: String]
        else { throw SignetError(.notFound, "cannot read the backend key at \(backendPrivateJWKPath)") }
        return try ClientKeyPair(privateJWK: jwk)
    }
}
