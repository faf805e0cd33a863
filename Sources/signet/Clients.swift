// `signet clients add|list|remove`.
import ArgumentParser
import Foundation
import SignetCore
import SignetServer
import SignetStore

struct Clients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Register, update, list and remove OAuth clients.",
        subcommands: [Add.self, Update.self, List.self, Show.self, Remove.self, Import.self, Export.self, Keygen.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a client. Secret methods print the secret once; private_key_jwt needs --jwks-file or --jwks-uri.")

        @OptionGroup var store: StoreOptions
        @Argument(help: "The client_id.") var id: String
        @Option(help: "A name shown to users on the login page.") var name: String?
        @Option(help: "Token endpoint authentication: none, client_secret_basic, client_secret_post, private_key_jwt.")
        var authMethod: String = "none"
        @Option(name: .customLong("redirect-uri"), help: "A redirect URI (repeat for several).") var redirectURIs: [String] = []
        @Option(name: .customLong("post-logout-redirect-uri"), help: "A post-logout redirect URI (repeatable).")
        var postLogoutRedirectURIs: [String] = []
        @Option(help: "A file holding the client's public JWKS (private_key_jwt).") var jwksFile: String?
        @Option(help: "The client's jwks_uri (private_key_jwt).") var jwksURI: String?
        @Flag(help: "Do not issue refresh tokens to this client.") var noRefreshTokens = false
        @Option(help: "The least assurance every login for this client must reach (urn:signet:loa:1 or urn:signet:loa:2), whatever acr_values says.")
        var minAcr: String?
        @Flag(help: "Allow the native login API (/login/native/...) for this client.") var nativeLogin = false
        @Flag(name: .customLong("require-par"), help: "Accept this client's authorization requests only through the PAR endpoint (RFC 9126).")
        var requirePAR = false
        @Flag(name: .customLong("require-signed-request-object"), help: "Accept only signed request objects from this client (RFC 9101).")
        var requireSignedRequestObject = false
        @Flag(name: .customLong("require-dpop"), help: "Issue this client only DPoP-bound tokens (RFC 9449).") var requireDPoP = false
        @Option(
            name: .customLong("resource"),
            help: "A resource (API) the client may ask tokens for (RFC 8707; repeatable; the first is its default audience).")
        var resources: [String] = []
        @Option(name: .customLong("app-launch-url"), help: "An app_launch_url the client may send (Singpass; https; repeatable).")
        var appLaunchURLs: [String] = []
        @Option(name: .customLong("scope"), help: "An API scope the client may ask for besides the OpenID ones (repeatable), e.g. accounts.")
        var apiScopes: [String] = []
        @Option(name: .customLong("facet-id"), help: "A trusted UAF facet id of the app: ios:bundle-id:ID or android:apk-key-hash:HASH (repeatable).")
        var facetIDs: [String] = []
        @Option(
            name: .customLong("aaid"),
            help: "An authenticator AAID the client's users may register (repeatable; default every one, see docs/authenticators.md).")
        var aaids: [String] = []
        @Flag(
            name: .customLong("fapi2"),
            help:
                "Hold this client to the FAPI 2.0 Security Profile: private_key_jwt, https redirects, PAR, DPoP, PS256/ES256/EdDSA, assertion aud = issuer, no refresh token rotation (docs/fapi2.md)."
        )
        var fapi2 = false
        @OptionGroup var lifetimes: ClientLifetimeOptions

        func run() async throws {
            guard let method = ClientRecord.AuthMethod(rawValue: authMethod) else {
                throw ValidationError("--auth-method must be one of \(ClientRecord.AuthMethod.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            var jwks: String?
            if let jwksFile {
                guard let data = FileManager.default.contents(atPath: jwksFile) else { throw ValidationError("cannot read \(jwksFile)") }
                jwks = String(decoding: data, as: UTF8.self)
            }
            var new = SignetAdmin.NewClient(
                id: id, name: name ?? id, authMethod: method, redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs,
                jwks: jwks, jwksURI: jwksURI, allowsRefreshTokens: !noRefreshTokens, minimumACR: minAcr, nativeLogin: nativeLogin)
            new.requirePushedAuthorizationRequests = requirePAR
            new.requireSignedRequestObject = requireSignedRequestObject
            new.appLaunchURLs = appLaunchURLs
            new.requireDPoP = requireDPoP
            new.resources = resources
            new.fapi2 = fapi2
            new.apiScopes = apiScopes
            new.facetIDs = facetIDs
            new.authenticatorAAIDs = aaids.isEmpty ? nil : aaids
            new.accessTokenLifetime = try lifetimes.seconds(lifetimes.accessTokenLifetime, "--access-token-lifetime") ?? nil
            new.idTokenLifetime = try lifetimes.seconds(lifetimes.idTokenLifetime, "--id-token-lifetime") ?? nil
            new.refreshTokenIdleLifetime = try lifetimes.seconds(lifetimes.refreshTokenIdleLifetime, "--refresh-token-idle-lifetime") ?? nil
            new.refreshTokenAbsoluteLifetime =
                try lifetimes.seconds(lifetimes.refreshTokenAbsoluteLifetime, "--refresh-token-absolute-lifetime") ?? nil
            new.codeLifetime = try lifetimes.seconds(lifetimes.codeLifetime, "--code-lifetime") ?? nil
            let (client, secret) = try await store.withStore { store in
                try await SignetAdmin(store: store, passwordHashCost: 4).addClient(new)
            }
            print("Registered client \(client.id) (\(client.authMethod.rawValue))")
            if let secret { print("client_secret: \(secret)\n(shown once; only its hash is stored)") }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a client's settings: name, minimum assurance, native login, PAR, DPoP, resources, scopes, facets, authenticators.")

        @OptionGroup var store: StoreOptions
        @Argument(help: "The client_id.") var id: String
        @Option(help: "A name shown to users on the login page.") var name: String?
        @Option(help: "The least assurance every login must reach (urn:signet:loa:1, urn:signet:loa:2, or none to remove it).")
        var minAcr: String?
        @Flag(inversion: .prefixedNo, help: "Allow or forbid the native login API for this client.") var nativeLogin: Bool?
        @Flag(name: .customLong("require-par"), inversion: .prefixedNo, help: "Require (or stop requiring) pushed authorization requests (RFC 9126).")
        var requirePAR: Bool?
        @Flag(
            name: .customLong("require-signed-request-object"), inversion: .prefixedNo,
            help: "Require (or stop requiring) signed request objects (RFC 9101).")
        var requireSignedRequestObject: Bool?
        @Flag(name: .customLong("require-dpop"), inversion: .prefixedNo, help: "Require (or stop requiring) DPoP-bound tokens (RFC 9449).")
        var requireDPoP: Bool?
        @Option(name: .customLong("resource"), help: "Replace the client's resources (RFC 8707; repeatable; the first is its default audience).")
        var resources: [String] = []
        @Flag(
            name: .customLong("fapi2"), inversion: .prefixedNo,
            help: "Hold (or stop holding) this client to the FAPI 2.0 Security Profile (docs/fapi2.md).")
        var fapi2: Bool?
        @Option(name: .customLong("scope"), help: "Replace the client's API scopes (repeatable; --scope none removes them all).")
        var apiScopes: [String] = []
        @Option(name: .customLong("facet-id"), help: "Replace the app's trusted UAF facet ids (repeatable; --facet-id none removes them all).")
        var facetIDs: [String] = []
        @Option(name: .customLong("aaid"), help: "Replace the AAIDs the client's users may register (repeatable; --aaid all accepts every one).")
        var aaids: [String] = []
        @OptionGroup var lifetimes: ClientLifetimeOptions

        func run() async throws {
            var change = SignetAdmin.ClientChange(
                name: name, minimumACR: minAcr.map { $0 == "none" ? nil : $0 }, nativeLogin: nativeLogin,
                requirePushedAuthorizationRequests: requirePAR,
                requireSignedRequestObject: requireSignedRequestObject, requireDPoP: requireDPoP, resources: resources.isEmpty ? nil : resources,
                fapi2: fapi2,
                apiScopes: apiScopes.isEmpty ? nil : apiScopes == ["none"] ? [] : apiScopes,
                facetIDs: facetIDs.isEmpty ? nil : facetIDs == ["none"] ? [] : facetIDs,
                authenticatorAAIDs: aaids.isEmpty ? nil : aaids == ["all"] ? .some(nil) : .some(aaids))
            change.accessTokenLifetime = try lifetimes.seconds(lifetimes.accessTokenLifetime, "--access-token-lifetime")
            change.idTokenLifetime = try lifetimes.seconds(lifetimes.idTokenLifetime, "--id-token-lifetime")
            change.refreshTokenIdleLifetime = try lifetimes.seconds(lifetimes.refreshTokenIdleLifetime, "--refresh-token-idle-lifetime")
            change.refreshTokenAbsoluteLifetime = try lifetimes.seconds(lifetimes.refreshTokenAbsoluteLifetime, "--refresh-token-absolute-lifetime")
            change.codeLifetime = try lifetimes.seconds(lifetimes.codeLifetime, "--code-lifetime")
            let client: ClientRecord
            do {
                client = try await store.withStore { try await SignetAdmin(store: $0, passwordHashCost: 4).updateClient(id: id, change) }
            } catch let error as SignetError where error.code == .notFound {
                throw ValidationError("no client \(id)")
            } catch let error as SignetError where error.code == .invalidConfiguration {
                throw ValidationError(error.reason)
            }
            print(
                "Updated client \(client.id): min_acr \(client.minimumACR ?? "none"), native login \(client.nativeLogin ? "on" : "off"), PAR \(client.mustPushRequests ? "required" : "optional"), FAPI 2.0 \(client.fapi2 ? "on" : "off")"
            )
        }
    }

    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Make a P-256 key pair for private_key_jwt: write the private JWK to a file only you can read, print the public JWKS to register.")

        @Option(help: "Where to write the private JWK (created with mode 0600; an existing file is not replaced).") var privateKeyFile: String
        @Option(help: "Read an existing PEM private key instead of making one.") var fromPem: String?

        func run() throws {
            let key: ClientKeyPair
            if let fromPem {
                guard let pem = try? String(contentsOfFile: fromPem, encoding: .utf8) else { throw ValidationError("cannot read \(fromPem)") }
                key = try ClientKeyPair(pem: pem)
            } else {
                key = ClientKeyPair()
            }
            let data = try JSONSerialization.data(withJSONObject: key.privateJWK, options: [.sortedKeys, .prettyPrinted])
            do { try PrivateFile.write(data, to: privateKeyFile, replacing: false) } catch let error as PrivateFileError where error.exists {
                throw ValidationError("\(privateKeyFile) exists; not replacing it")
            } catch {
                throw ValidationError("cannot write \(privateKeyFile): \(error)")
            }
            print(key.publicJWKS)
            FileHandle.standardError.write(Data("kid \(key.keyID); private JWK written to \(privateKeyFile) (mode 0600)\n".utf8))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the registered clients.")
        @OptionGroup var store: StoreOptions
        @Option(help: "text, or json (RFC 7591 client metadata).") var output: OutputFormat = .text

        func run() async throws {
            let clients = try await store.withStore { try await $0.listClients() }
            if output == .json { return try OutputFormat.printJSON(clients.map(ClientMetadata.init)) }
            if clients.isEmpty { print("No clients.") }
            for client in clients {
                let apiScopes = client.allowedScopes.filter { !AuthorizationRequestValidator.supportedScopes.contains($0) }
                print(
                    "\(client.id)\t\(client.authMethod.rawValue)\t\(client.name)\t\(client.redirectURIs.joined(separator: " "))"
                        + (apiScopes.isEmpty ? "" : "\tscopes \(apiScopes.joined(separator: " "))") + (client.fapi2 ? "\tFAPI 2.0" : ""))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a client.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The client_id.") var id: String

        func run() async throws {
            do {
                try await store.withStore { try await SignetAdmin(store: $0, passwordHashCost: 4).removeClient(id: id) }
            } catch let error as SignetError where error.code == .notFound {
                throw ValidationError("no client \(id)")
            }
            print("Removed client \(id)")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one client's registration as RFC 7591 client metadata (JSON).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The client_id.") var id: String

        func run() async throws {
            guard let client = try await store.withStore({ try await $0.client(id: id) }) else { throw ValidationError("no client \(id)") }
            try OutputFormat.printJSON(ClientMetadata(client))
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every client as RFC 7591 client metadata (a JSON array, no secrets), to keep clients as code.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The file to write, or - for standard output.") var file: String

        func run() async throws {
            let clients = try await store.withStore { try await $0.listClients() }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(clients.map(ClientMetadata.init))
            if file == "-" {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            } else {
                try data.write(to: URL(fileURLWithPath: file), options: .withoutOverwriting)
                print("Exported \(clients.count) clients to \(file)")
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register or replace clients from RFC 7591 client metadata (a JSON array, as `export` writes).",
            discussion:
                "Every client is checked before any is written: one bad entry changes nothing. New clients with a secret method print their secret once."
        )
        @OptionGroup var store: StoreOptions
        @Argument(help: "The file to read, or - for standard input.") var file: String

        func run() async throws {
            let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
            let clients: [SignetAdmin.NewClient]
            do {
                let list = try ClientMetadata.decodeList(data)
                clients = try list.enumerated().map { index, metadata in
                    do { return try metadata.newClient() } catch let error as ClientMetadataError {
                        throw ClientMetadataError(
                            error: error.error, description: "entry \(index + 1) (\(metadata.clientID ?? "no client_id")): \(error.description)")
                    }
                }
                guard Set(clients.map(\.id)).count == clients.count else { throw ValidationError("a client_id appears twice in \(file)") }
            } catch let error as ClientMetadataError {
                throw ValidationError("\(error.error): \(error.description); nothing was imported")
            }
            let results = try await store.withStore { store in
                try await ClientImport(admin: SignetAdmin(store: store, passwordHashCost: 4)).apply(clients)
            }
            for result in results {
                print("\(result.replaced ? "replaced" : "added")\t\(result.id)" + (result.secret.map { "\tclient_secret \($0) (shown once)" } ?? ""))
            }
        }
    }
}

/// A client's own token lifetimes (``TokenLifetimes``), for `clients add` and `clients update`.
struct ClientLifetimeOptions: ParsableArguments {
    @Option(help: "Seconds this client's access tokens live, 60–86400, or default for the provider's (tokens.accessTokenLifetime).")
    var accessTokenLifetime: String?
    @Option(help: "Seconds this client's ID tokens live, 60–86400, or default.")
    var idTokenLifetime: String?
    @Option(help: "Seconds this client's refresh tokens may go unused, 60–31536000, or default.")
    var refreshTokenIdleLifetime: String?
    @Option(help: "Seconds this client's grants last however often refreshed, 60–315360000, or default.")
    var refreshTokenAbsoluteLifetime: String?
    @Option(help: "Seconds this client's authorization codes live, 10–60, or default.")
    var codeLifetime: String?

    /// `nil` when the option was not given; `.some(nil)` for `default`; else the seconds (their
    /// bounds are checked with the rest of the registration).
    func seconds(_ value: String?, _ flag: String) throws -> TimeInterval?? {
        guard let value else { return nil }
        if value == "default" { return .some(nil) }
        guard let seconds = Int(value), seconds > 0 else { throw ValidationError("\(flag) takes a number of seconds or default, not '\(value)'") }
        return .some(TimeInterval(seconds))
    }
}
