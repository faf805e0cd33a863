// The admin API: bearer token, RFC 7591/7592 client shapes and errors, users, keys, audit.
import Foundation
import Logging
import SignetCore
import SignetScript
import SignetServer
import SignetTesting
import Testing

/// The admin listener of a test provider, spoken to with a token.
struct AdminClient {
    let base: String
    let token: String

    func send(_ method: String, _ path: String, json: String? = nil, token: String? = nil, contentType: String = "application/json") async throws
        -> ScriptedResponse
    {
        var headers: [(String, String)] = []
        if let token = token ?? Optional(self.token), !token.isEmpty { headers.append(("Authorization", "Bearer \(token)")) }
        if json != nil { headers.append(("Content-Type", contentType)) }
        return try await ScriptedBrowser().send(method, base + path, body: json, headers: headers)
    }
}

/// Runs `body` with a test provider and its admin listener (admin API on).
func withAdminAPI<Result: Sendable>(_ body: (TestProvider, AdminClient) async throws -> Result) async throws -> Result {
    try await withTestProvider { provider in
        let token = "admin-token-" + String(repeating: "x", count: 32)
        let access = AdminAPIAccess(admin: provider.admin, configuration: provider.configuration, token: token)
        return try await withRunningService("the admin listener", logger: Logger(label: "test")) { listening in
            buildAdminApplication(
                metrics: provider.metrics, api: access, host: "127.0.0.1", port: 0, logger: Logger(label: "test"), onServerRunning: listening)
        } _: { port in
            try await body(provider, AdminClient(base: "http://127.0.0.1:\(port)", token: token))
        }
    }
}

@Suite("Operations: the admin API")
struct AdminAPITests {
    static let app =
        #"{"client_id":"shop","client_name":"Shop","token_endpoint_auth_method":"client_secret_basic","redirect_uris":["https://shop.example.com/cb"],"grant_types":["authorization_code","refresh_token"],"scope":"orders"}"#

    @Test("no token is 401 with a challenge, a wrong one 401 invalid_token; the document needs none")
    func token() async throws {
        try await withAdminAPI { _, api in
            let none = try await api.send("GET", "/admin/clients", token: "")
            #expect(none.status == 401)
            #expect(none.header("WWW-Authenticate") == #"Bearer realm="signet-admin""#)
            let wrong = try await api.send("GET", "/admin/clients", token: api.token + "y")
            #expect(wrong.status == 401)
            #expect(wrong.json["error"] as? String == "invalid_token")
            let document = try await api.send("GET", "/admin/openapi.yaml", token: "")
            #expect(document.status == 200)
            #expect(document.body.hasPrefix("openapi: 3.1.0"))
        }
    }

    @Test("clients: register (201, secret once), read, replace, remove; RFC 7591 errors change nothing")
    func clients() async throws {
        try await withAdminAPI { provider, api in
            let made = try await api.send("POST", "/admin/clients", json: Self.app)
            #expect(made.status == 201, "\(made.body)")
            #expect(made.json["client_id"] as? String == "shop")
            let secret = try #require(made.json["client_secret"] as? String)
            #expect(made.json["scope"] as? String == "orders")
            #expect(made.json["grant_types"] as? [String] == ["authorization_code", "refresh_token"])
            let read = try await api.send("GET", "/admin/clients/shop")
            #expect(read.status == 200)
            #expect(read.json["client_secret"] == nil)
            #expect(read.json["redirect_uris"] as? [String] == ["https://shop.example.com/cb"])
            let stored = try #require(try await provider.store.client(id: "shop"))
            #expect(stored.secretHash == SecretDigest.hex(secret))

            let before = try await provider.store.listClients()
            for (body, error) in [
                (#"{"client_id":"bad","redirect_uris":["http://evil.example.com/cb"]}"#, "invalid_redirect_uri"),
                (#"{"client_id":"bad","redirect_uris":["https://a.example.com/cb#frag"]}"#, "invalid_redirect_uri"),
                (#"{"client_id":"bad","redirect_uris":[]}"#, "invalid_redirect_uri"),
                (
                    #"{"client_id":"bad","token_endpoint_auth_method":"tls_client_auth","redirect_uris":["https://a.example.com/cb"]}"#,
                    "invalid_client_metadata"
                ),
                (#"{"client_id":"bad","grant_types":["implicit"],"redirect_uris":["https://a.example.com/cb"]}"#, "invalid_client_metadata"),
                (
                    #"{"client_id":"bad","token_endpoint_auth_method":"private_key_jwt","redirect_uris":["https://a.example.com/cb"],"jwks":{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA","d":"AA"}]}}"#,
                    "invalid_client_metadata"
                ),
                (#"{"client_id":"bad","redirect_uris":["https://a.example.com/cb"],"signet_minimum_acr":"loa:9"}"#, "invalid_client_metadata"),
                (#"{"client_id":"bad","redirect_uris":"https://a.example.com/cb"}"#, "invalid_client_metadata"),
                (#"{"client_id":"shop","redirect_uris":["https://a.example.com/cb"],"client_id":"other"}"#, "invalid_request"),
            ] {
                let refused = try await api.send("POST", "/admin/clients", json: body)
                #expect(refused.status == 400, "\(body)")
                #expect(refused.json["error"] as? String == error, "\(body): \(refused.body)")
            }
            let duplicate = try await api.send("POST", "/admin/clients", json: Self.app)
            #expect(duplicate.status == 409)
            let wrongType = try await api.send("POST", "/admin/clients", json: Self.app, contentType: "text/plain")
            #expect(wrongType.status == 415)
            #expect(try await provider.store.listClients() == before)

            // RFC 7592 replace: the secret stays; a body naming another client is refused.
            let replaced = try await api.send(
                "PUT", "/admin/clients/shop",
                json: #"{"client_name":"Shop 2","token_endpoint_auth_method":"client_secret_basic","redirect_uris":["https://shop.example.com/cb2"]}"#
            )
            #expect(replaced.status == 200, "\(replaced.body)")
            #expect(replaced.json["client_secret"] == nil)
            let after = try #require(try await provider.store.client(id: "shop"))
            #expect(after.redirectURIs == ["https://shop.example.com/cb2"] && after.secretHash == stored.secretHash && !after.allowsRefreshTokens)
            let mismatch = try await api.send(
                "PUT", "/admin/clients/shop", json: #"{"client_id":"other","redirect_uris":["https://a.example.com/cb"]}"#)
            #expect(mismatch.json["error"] as? String == "invalid_client_metadata")
            let badReplace = try await api.send(
                "PUT", "/admin/clients/shop", json: #"{"token_endpoint_auth_method":"none","redirect_uris":["http://evil.example.com/cb"]}"#)
            #expect(badReplace.json["error"] as? String == "invalid_redirect_uri")
            #expect(try await provider.store.client(id: "shop") == after)
            #expect(
                try await api.send(
                    "PUT", "/admin/clients/nobody", json: #"{"token_endpoint_auth_method":"none","redirect_uris":["https://a.example.com/cb"]}"#
                ).status == 404)

            #expect(try await api.send("DELETE", "/admin/clients/shop").status == 204)
            #expect(try await api.send("GET", "/admin/clients/shop").status == 404)
            #expect(try await api.send("DELETE", "/admin/clients/shop").status == 404)

            let events = try await api.send("GET", "/admin/audit?client=shop")
            let kinds = try #require(try JSONSerialization.jsonObject(with: Data(events.body.utf8)) as? [[String: Any]]).map { $0["kind"] as? String }
            #expect(kinds == ["client.removed", "client.updated", "client.added"])
        }
    }

    @Test("twenty parallel registrations of one client_id: exactly one is made")
    func parallelRegistration() async throws {
        try await withAdminAPI { provider, api in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await api.send("POST", "/admin/clients", json: Self.app).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 1)
            #expect(statuses.filter { $0 == 409 }.count == 19)
            #expect(try await provider.store.listClients().filter { $0.id == "shop" }.count == 1)
        }
    }

    @Test("users: add, show, change, lock (which ends their grants), remove; keys: list and rotate")
    func usersAndKeys() async throws {
        try await withAdminAPI { provider, api in
            let added = try await api.send(
                "POST", "/admin/users", json: #"{"username":"Bob","password":"a long password","phone_number":"+4522222222"}"#)
            #expect(added.status == 201)
            #expect(added.json["username"] as? String == "bob")
            #expect(added.json["password"] == nil && added.json["password_hash"] == nil)
            #expect(try await api.send("POST", "/admin/users", json: #"{"username":"bob","password":"x"}"#).status == 409)
            #expect(try await api.send("POST", "/admin/users", json: #"{"username":"carol"}"#).json["error"] as? String == "invalid_request")
            // A new user gets the checks a change gets, and a username no terminal can be fooled by.
            for body in [
                #"{"username":"carol","password":"a long password","phone_number":"not-a-phone"}"#,
                #"{"username":"carol","password":"a long password","email":"nope"}"#,
                #"{"username":"carol","password":"a long password","name":"\#(String(repeating: "A", count: 201))"}"#,
                #"{"username":"carol","password":"a long password","name":"Carol\u001b[31m"}"#,
                #"{"username":"carol\u0000\n\u001b[31m","password":"a long password"}"#,
                #"{"username":"carol\u2028x","password":"a long password"}"#,
                #"{"username":"carol","password":"a long password","name":"\u202Egnp.exe"}"#,
                #"{"username":"car\u200Bol","password":"a long password"}"#,
                #"{"username":"carol","password":"a long password","email":"carol\u2060@example.com"}"#,
            ] {
                let refused = try await api.send("POST", "/admin/users", json: body)
                #expect(refused.status == 400, "\(body)")
            }
            #expect(try await provider.store.listUsers().map(\.username) == ["bob"], "no refused user was stored")
            // Joiners that scripts and emoji need are fine; an empty value is none, as in a change.
            let joined = try await api.send(
                "POST", "/admin/users", json: #"{"username":"mahsa","password":"a long password","name":"مه\u200Cسا 👩\u200D💻","phone_number":""}"#)
            #expect(joined.status == 201, "\(joined.body)")
            #expect(try await provider.store.user(username: "mahsa")?.phoneNumber == nil)
            #expect(try await api.send("DELETE", "/admin/users/mahsa").status == 204)
            let changed = try await api.send("PATCH", "/admin/users/bob", json: #"{"name":"Bob B","locked":true}"#)
            #expect(changed.status == 200)
            #expect(changed.json["name"] as? String == "Bob B" && changed.json["locked"] as? Bool == true)
            #expect(try await provider.store.user(username: "bob")?.locked == true)
            let badPhone = try await api.send("PATCH", "/admin/users/bob", json: #"{"phone_number":"12345"}"#)
            #expect(badPhone.status == 400)
            #expect(try await provider.store.user(username: "bob")?.phoneNumber == "+4522222222")
            #expect(try await api.send("PATCH", "/admin/users/nobody", json: #"{"locked":true}"#).status == 404)
            #expect(try await api.send("GET", "/admin/users/bob").json["created_at"] is String)
            #expect(try await api.send("DELETE", "/admin/users/bob").status == 204)
            #expect(try await provider.store.user(username: "bob") == nil)

            let keys = try JSONSerialization.jsonObject(with: Data(try await api.send("GET", "/admin/keys").body.utf8)) as? [[String: Any]]
            let active = try #require(keys?.first { $0["status"] as? String == "active" }?["kid"] as? String)
            let rotated = try await api.send("POST", "/admin/keys/rotate")
            #expect(rotated.status == 200)
            let next = try #require(rotated.json["signing_kid"] as? String)
            #expect(next != active)
            let audit = try await api.send("GET", "/admin/audit?limit=1")
            #expect(audit.body.contains("keys.rotated"))
            #expect(try await api.send("GET", "/admin/audit?limit=0").status == 400)
            #expect(try await api.send("GET", "/admin/audit?since=yesterday").status == 400)
        }
    }

    @Test("every path the OpenAPI document names is served")
    func documentMatchesRoutes() async throws {
        try await withAdminAPI { _, api in
            let document = try await api.send("GET", "/admin/openapi.yaml").body
            let paths = document.split(separator: "\n").filter { $0.hasPrefix("  /admin/") }.map { String($0.dropFirst(2).dropLast()) }
            #expect(paths.count == 8)
            for path in paths {
                let concrete = path.replacingOccurrences(of: "{client_id}", with: "nobody").replacingOccurrences(of: "{username}", with: "nobody")
                let method = path == "/admin/keys/rotate" ? "POST" : "GET"
                let answer = try await api.send(method, concrete)
                // An unknown client or user is a JSON not_found, never the router's empty 404.
                #expect(answer.status == 200 || answer.json["error"] as? String == "not_found", "\(path)")
            }
        }
    }
}
